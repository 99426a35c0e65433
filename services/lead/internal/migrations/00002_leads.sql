-- +goose Up
CREATE TABLE leads (
    id                   bigserial   PRIMARY KEY,
    order_id             bigint      NOT NULL CHECK (order_id > 0),
    order_code           text        NOT NULL,
    phone                text        NOT NULL,
    name                 text,
    source_comment       text,
    ip                   text,
    external_id_crm_a    text,
    external_id_crm_b    text,
    external_id_crm_c    text,
    external_id_crm_d    text,
    status_id            int         NOT NULL REFERENCES lead_statuses (id),
    lead_type            text        NOT NULL CHECK (lead_type IN ('straight', 'selection')),
    create_method        text        NOT NULL,
    source               text        NOT NULL DEFAULT 'organic',
    ad_campaign_id       text        CHECK (char_length(ad_campaign_id) <= 64),
    is_secondary         boolean     NOT NULL DEFAULT false,
    previous_lead_id     bigint,
    next_lead_id         bigint,
    planning_call_at     timestamptz,
    priority             int         NOT NULL DEFAULT 0,
    utc_offset           int         CHECK (utc_offset BETWEEN -12 AND 14),
    social_network_id    bigint      CHECK (social_network_id > 0),
    social_login         text,
    messenger_user_name  text,
    messenger_phone      text,
    messenger_id         bigint      CHECK (messenger_id > 0),
    -- Custom-field id (as text) to the value, already checked against the field's type.
    custom_values        jsonb       NOT NULL DEFAULT '{}',
    -- The asynchronous job that created the lead: unique, so a redelivered job creates nothing twice.
    job_id               uuid,
    created_by           bigint,
    created_at           timestamptz NOT NULL DEFAULT now(),
    updated_at           timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT leads_job_id_key UNIQUE (job_id)
);
-- The list operation: a page of one order's leads in a period, newest first, and its exact count
-- (an index-only scan).
CREATE INDEX leads_order_created ON leads (order_id, created_at DESC, id DESC);
-- The list without an order filter.
CREATE INDEX leads_created ON leads (created_at DESC, id DESC);
-- The latest lead with a phone in an order, for secondary-lead links.
CREATE INDEX leads_order_phone ON leads (order_id, phone, id DESC);

-- Outcomes of asynchronous creates. A job without a row here is still queued.
CREATE TABLE lead_jobs (
    job_id       uuid        PRIMARY KEY,
    status       text        NOT NULL CHECK (status IN ('done', 'failed')),
    lead_id      bigint      REFERENCES leads (id),
    reason       text,
    finished_at  timestamptz NOT NULL DEFAULT now(),
    CHECK ((status = 'done') = (lead_id IS NOT NULL))
);

-- +goose Down
DROP TABLE lead_jobs;
DROP TABLE leads;
