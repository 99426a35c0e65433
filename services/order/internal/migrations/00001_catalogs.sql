-- +goose Up
-- Languages an order may name as its default AI language and in transfer-number names.
CREATE TABLE languages (
    code text PRIMARY KEY,
    name text NOT NULL
);
INSERT INTO languages (code, name) VALUES ('ru', 'Русский'), ('gb', 'English');

-- Groups of intervals (minutes) between call attempts; at most one is the default.
CREATE TABLE call_attempt_groups (
    id                      bigserial PRIMARY KEY,
    title                   text        NOT NULL,
    intervals               int[]       NOT NULL CHECK (cardinality(intervals) >= 1),
    is_default              boolean     NOT NULL DEFAULT false,
    reset_attempts_enabled  boolean     NOT NULL DEFAULT false,
    created_at              timestamptz NOT NULL DEFAULT now(),
    updated_at              timestamptz NOT NULL DEFAULT now(),
    created_by              bigint,
    updated_by              bigint
);
CREATE UNIQUE INDEX call_attempt_groups_one_default ON call_attempt_groups (is_default) WHERE is_default;


-- +goose Down
DROP TABLE call_attempt_groups;
DROP TABLE languages;
