-- +goose Up
-- Who made and who last changed each agent group (the verified caller; null for the demo seed).
ALTER TABLE agent_groups
    ADD COLUMN created_by bigint,
    ADD COLUMN updated_by bigint;

-- +goose Down
ALTER TABLE agent_groups DROP COLUMN created_by, DROP COLUMN updated_by;
