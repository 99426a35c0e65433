-- +goose Up
-- Who last changed a lead (the verified caller of the update; null for changes without one, such
-- as call results).
ALTER TABLE leads ADD COLUMN updated_by bigint;

-- +goose Down
ALTER TABLE leads DROP COLUMN updated_by;
