-- +goose Up
-- A partner's endpoint and the events it wants. The owner is the user who created it: events reach
-- it only for objects that user may see (services/webhook/README.md, "Scope").
CREATE TABLE subscriptions (
    id                    bigserial   PRIMARY KEY,
    owner_user_id         bigint      NOT NULL,
    owner_group           text        NOT NULL,
    url                   text        NOT NULL,
    events                text[]      NOT NULL,
    order_ids             bigint[]    NOT NULL DEFAULT '{}',
    description           text        NOT NULL DEFAULT '',
    enabled               boolean     NOT NULL DEFAULT true,
    -- Standard Webhooks secrets (whsec_...). After a rotation the previous one signs beside the
    -- new one until previous_secret_until.
    secret                text        NOT NULL,
    previous_secret       text,
    previous_secret_until timestamptz,
    -- Since when every delivery to the endpoint has failed (NULL: the last one succeeded).
    failing_since         timestamptz,
    disabled_reason       text,
    created_at            timestamptz NOT NULL,
    updated_at            timestamptz NOT NULL
);
CREATE INDEX subscriptions_owner ON subscriptions (owner_user_id, id);
CREATE INDEX subscriptions_events ON subscriptions USING gin (events) WHERE enabled;

-- An event as it is sent: the body is signed as stored, so every attempt sends the same bytes.
CREATE TABLE events (
    id          text        PRIMARY KEY,
    type        text        NOT NULL,
    body        bytea       NOT NULL,
    received_at timestamptz NOT NULL
);

-- One event to one endpoint: pending until a 2xx, or failed once its retries are spent.
CREATE TABLE deliveries (
    id               bigserial   PRIMARY KEY,
    subscription_id  bigint      NOT NULL REFERENCES subscriptions ON DELETE CASCADE,
    event_id         text        NOT NULL REFERENCES events,
    state            text        NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
    attempts         int         NOT NULL DEFAULT 0,
    -- The retries run for a fixed time from the first attempt (a redelivery starts them again).
    first_attempt_at timestamptz,
    next_attempt_at  timestamptz,
    -- A dispatcher holds the delivery while it sends it; a dispatcher that died frees it then.
    claimed_until    timestamptz,
    last_status_code int,
    last_latency_ms  int,
    last_error       text,
    last_response    text,
    created_at       timestamptz NOT NULL,
    delivered_at     timestamptz,
    UNIQUE (subscription_id, event_id)
);
-- The dispatcher's scan: pending deliveries by due time.
CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE state = 'pending';
CREATE INDEX deliveries_log ON deliveries (subscription_id, id DESC);

-- Every attempt, for the delivery log.
CREATE TABLE delivery_attempts (
    delivery_id  bigint      NOT NULL REFERENCES deliveries ON DELETE CASCADE,
    n            int         NOT NULL,
    at           timestamptz NOT NULL,
    status_code  int,
    latency_ms   int         NOT NULL,
    error        text,
    response     text,
    PRIMARY KEY (delivery_id, n)
);

-- +goose Down
DROP TABLE delivery_attempts;
DROP TABLE deliveries;
DROP TABLE events;
DROP TABLE subscriptions;
