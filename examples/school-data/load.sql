-- Loads the data plateau datagen wrote into data/ (school.yaml) into PostgreSQL:
--   psql "$PGURL" -v ON_ERROR_STOP=1 -q -f load.sql
-- The foreign keys check the generated relations as they load.
DROP TABLE IF EXISTS responses, students, classes, teachers, campaigns;
CREATE TABLE campaigns (campaign_id int PRIMARY KEY, urn text NOT NULL, name text NOT NULL);
CREATE TABLE teachers (teacher_id int PRIMARY KEY, first_name text, last_name text, username text UNIQUE,
                       password text, hired date);
CREATE TABLE classes (class_id int PRIMARY KEY, teacher_id int NOT NULL REFERENCES teachers, urn text,
                      subject text, campaign_id int NOT NULL REFERENCES campaigns);
CREATE TABLE students (student_id int PRIMARY KEY, class_id int NOT NULL REFERENCES classes, username text UNIQUE,
                       password text, name text);
CREATE TABLE responses (response_id bigint PRIMARY KEY, student_id int NOT NULL REFERENCES students,
                        campaign_id int NOT NULL REFERENCES campaigns, uuid uuid NOT NULL, submitted timestamptz,
                        latitude float8, longitude float8, photo_bytes int, privacy text, comment text);
\copy campaigns FROM 'data/campaigns.csv' WITH (FORMAT csv, HEADER true)
\copy teachers FROM 'data/teachers.csv' WITH (FORMAT csv, HEADER true)
\copy classes FROM 'data/classes.csv' WITH (FORMAT csv, HEADER true)
\copy students FROM 'data/students.csv' WITH (FORMAT csv, HEADER true)
-- responses.ndjson: one JSON object a line, through a staging table (CSV mode with
-- a quote and delimiter that never occur, so backslashes stay JSON's own).
CREATE TEMP TABLE raw (doc jsonb);
\copy raw FROM 'data/responses.ndjson' WITH (FORMAT csv, QUOTE E'\x01', DELIMITER E'\x02')
INSERT INTO responses
SELECT (doc->>'response_id')::bigint, (doc->>'student_id')::int, (doc->>'campaign_id')::int, (doc->>'uuid')::uuid,
       (doc->>'submitted')::timestamptz, (doc->>'latitude')::float8, (doc->>'longitude')::float8,
       (doc->>'photo_bytes')::int, doc->>'privacy', doc->>'comment'
FROM raw;
CREATE INDEX ON students (class_id);
CREATE INDEX ON responses (student_id);
ANALYZE;
SELECT 'loaded ' || (SELECT count(*) FROM students) || ' students and ' || (SELECT count(*) FROM responses) || ' responses' AS loaded;
