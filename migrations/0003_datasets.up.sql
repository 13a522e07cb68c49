-- Datasets: uploaded JSONL files, stored whole or not at all.

CREATE TABLE datasets (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    owner_id       bigint      NOT NULL REFERENCES users (id),
    name           text        NOT NULL,
    format         text        NOT NULL,
    task_kind      text        NOT NULL DEFAULT '',
    default_scorer text        NOT NULL DEFAULT '',
    visibility     text        NOT NULL DEFAULT 'private',
    item_count     integer     NOT NULL DEFAULT 0,
    bytes          bigint      NOT NULL DEFAULT 0,
    sha256         text        NOT NULL DEFAULT '',
    starter        boolean     NOT NULL DEFAULT false,
    created_at     timestamptz NOT NULL DEFAULT now(),
    -- Set when a dataset that past benchmarks used is deleted: it disappears
    -- from lists but stays readable for those results.
    deleted_at     timestamptz,
    CONSTRAINT datasets_visibility_check CHECK (visibility IN ('private', 'shared')),
    CONSTRAINT datasets_name_check CHECK (name <> '' AND length(name) <= 200)
);
CREATE INDEX datasets_owner_id_idx ON datasets (owner_id);
CREATE INDEX datasets_sha256_idx ON datasets (sha256);

CREATE TABLE dataset_items (
    dataset_id bigint NOT NULL REFERENCES datasets (id) ON DELETE CASCADE,
    idx        integer NOT NULL,
    custom_id  text    NOT NULL,
    request    jsonb   NOT NULL,
    reference  jsonb,
    PRIMARY KEY (dataset_id, idx)
);
CREATE UNIQUE INDEX dataset_items_custom_id_key ON dataset_items (dataset_id, custom_id);
