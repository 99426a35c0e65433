-- +goose Up
-- The scopes of the API key that created or last updated a subscription: an event reaches it only
-- when they cover the event's data (services/webhook/README.md, "Events and scope"). NULL is a key
-- without scopes, the owner's full rights: what every subscription made before had.
ALTER TABLE subscriptions ADD COLUMN key_scopes text[];
-- Caps per owner and per URL are counted under a per-owner lock (subscription.Store.Create).
CREATE INDEX subscriptions_owner_url ON subscriptions (owner_user_id, url);

-- +goose Down
DROP INDEX subscriptions_owner_url;
ALTER TABLE subscriptions DROP COLUMN key_scopes;
