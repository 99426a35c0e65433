-- +goose Up
-- When an agent was put through to an answered call (null: none was). An answered call without
-- one within 2 s of the answer is stored as abandoned (internal/ingest, Abandoned).
ALTER TABLE calls ADD COLUMN agent_connected_at timestamptz;

-- +goose Down
ALTER TABLE calls DROP COLUMN agent_connected_at;
