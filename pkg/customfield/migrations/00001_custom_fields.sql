-- +goose Up
-- IF NOT EXISTS adopts the table that services created themselves before the catalog was shared.
CREATE TABLE IF NOT EXISTS custom_fields (
    id          bigserial PRIMARY KEY,
    code        text        NOT NULL,
    name        text        NOT NULL,
    type        text        NOT NULL CHECK (type IN ('string', 'integer', 'number', 'boolean', 'date', 'select', 'multiselect')),
    options     text[]      NOT NULL DEFAULT '{}',
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT custom_fields_code_key UNIQUE (code)
);

-- +goose Down
DROP TABLE custom_fields;
