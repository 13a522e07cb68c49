DROP TABLE models;
