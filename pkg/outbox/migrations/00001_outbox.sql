-- +goose Up
-- Events written in the same transaction as the state change they announce; a relay publishes
-- them after the commit and stamps published_at.
CREATE TABLE outbox (
    id            bigserial   PRIMARY KEY,
    exchange      text        NOT NULL,
    routing_key   text        NOT NULL,
    message_id    text        NOT NULL,
    type          text        NOT NULL,
    body          bytea       NOT NULL,
    -- The request that caused the event, carried into the message's headers.
    request_id    text,
    created_at    timestamptz NOT NULL DEFAULT now(),
    published_at  timestamptz
);
-- The relay's scan: only the rows still to publish, in id order.
CREATE INDEX outbox_unpublished ON outbox (id) WHERE published_at IS NULL;
-- The purge of rows published long ago.
CREATE INDEX outbox_published_at ON outbox (published_at) WHERE published_at IS NOT NULL;

-- +goose Down
DROP TABLE outbox;
