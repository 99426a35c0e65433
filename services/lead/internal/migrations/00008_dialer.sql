-- +goose Up
-- The dialing queue (internal/dialer) and the do-not-call list (internal/dnc).

-- A lead handed to a dialer carries the lease until leased_until; a lease that has expired gives
-- the lead back by itself (the due query ignores it), so no sweeper is needed. status_changed_at
-- is when the status last changed through the update API, for the order's qualified-leads-per-day
-- limit (null: never changed since the create).
ALTER TABLE leads
    ADD COLUMN lease_id          uuid,
    ADD COLUMN leased_until      timestamptz,
    ADD COLUMN status_changed_at timestamptz;

-- The statuses calls may still change (category in_progress). It names the ids rather than reading
-- lead_statuses so that it can define the queue's partial index; a migration that adds a status
-- must redefine it and rebuild leads_dial_queue (a test compares it with the catalog).
-- +goose StatementBegin
CREATE FUNCTION lead_dialable(status_id int) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT status_id IN (1, 2, 3, 8) $$;
-- +goose StatementEnd

-- The queue of one order in lease order: final leads are not in it, and within a priority the due
-- leads come before those planned later, so a lease reads the due leads it hands out (and the
-- leased ones it skips), not the rest of the order.
CREATE INDEX leads_dial_queue ON leads (order_id, priority DESC, planning_call_at ASC NULLS FIRST, id)
    WHERE lead_dialable(status_id);
-- Release and extend find a lease's leads.
CREATE INDEX leads_lease ON leads (lease_id) WHERE lease_id IS NOT NULL;
-- Qualified leads of an order per day.
CREATE INDEX leads_status_changed ON leads (order_id, status_changed_at) WHERE status_changed_at IS NOT NULL;

-- One row per lease call that handed out leads: who leased, for which order, until when.
CREATE TABLE dialer_leases (
    id          uuid        PRIMARY KEY,
    order_id    bigint      NOT NULL,
    dialer_id   text        NOT NULL,
    leased_by   bigint,
    expires_at  timestamptz NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);

-- The do-not-call list: a phone (E.164) not to be dialed in one order, or in every order
-- (order_id null), until expires_at (null: for good).
CREATE TABLE dnc_entries (
    id          bigserial   PRIMARY KEY,
    phone       text        NOT NULL,
    order_id    bigint      CHECK (order_id > 0),
    reason      text,
    expires_at  timestamptz,
    created_by  bigint,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);
-- One entry per phone and order (0 standing for every order); also the lookup of a lead's phone.
CREATE UNIQUE INDEX dnc_entries_key ON dnc_entries (phone, (coalesce(order_id, 0)));
-- The list filtered by order, newest first.
CREATE INDEX dnc_entries_order ON dnc_entries (order_id, id DESC);

-- +goose Down
DROP TABLE dnc_entries;
DROP TABLE dialer_leases;
DROP INDEX leads_status_changed;
DROP INDEX leads_lease;
DROP INDEX leads_dial_queue;
DROP FUNCTION lead_dialable(int);
ALTER TABLE leads DROP COLUMN status_changed_at, DROP COLUMN leased_until, DROP COLUMN lease_id;
