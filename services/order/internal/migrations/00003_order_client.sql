-- +goose Up
-- The client (a user of group client) an order belongs to: its leads and calls are theirs to see.
ALTER TABLE orders ADD COLUMN client_user_id bigint;
CREATE INDEX orders_client_user_id ON orders (client_user_id);

-- +goose Down
DROP INDEX orders_client_user_id;
ALTER TABLE orders DROP COLUMN client_user_id;
