-- +goose Up
-- A key may be narrowed to scopes (empty: its user's full rights) and may expire.
ALTER TABLE api_keys
    ADD COLUMN scopes     text[]      NOT NULL DEFAULT '{}',
    ADD COLUMN expires_at timestamptz;

-- +goose Down
ALTER TABLE api_keys DROP COLUMN scopes, DROP COLUMN expires_at;
