-- +goose Up
CREATE TABLE idempotency_keys (
    owner         text        NOT NULL,
    key           text        NOT NULL,
    request_hash  bytea       NOT NULL,
    status        int,
    response      bytea,
    created_at    timestamptz NOT NULL DEFAULT now(),
    completed_at  timestamptz,
    PRIMARY KEY (owner, key)
);
CREATE INDEX idempotency_keys_created_at ON idempotency_keys (created_at);

-- +goose Down
DROP TABLE idempotency_keys;
