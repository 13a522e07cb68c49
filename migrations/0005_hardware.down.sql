ALTER TABLE agents DROP COLUMN hardware_profile;
DROP TABLE hardware_profiles;
