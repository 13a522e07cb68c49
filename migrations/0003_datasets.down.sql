DROP TABLE dataset_items;
DROP TABLE datasets;
