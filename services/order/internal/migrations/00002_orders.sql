-- +goose Up
CREATE TABLE orders (
    id                              bigserial PRIMARY KEY,
    code                            text        NOT NULL,
    service_title                   text        NOT NULL,
    title                           text        NOT NULL,
    -- Seven days, Monday first; each ["HH:MM","HH:MM"] or [] for a day off.
    call_schedule                   jsonb       NOT NULL DEFAULT '[[],[],[],[],[],[],[]]',
    call_holiday_overrides          date[]      NOT NULL DEFAULT '{}',
    auto_dialing_enabled            boolean     NOT NULL DEFAULT false,
    predictive_mode_enabled         boolean     NOT NULL DEFAULT false,
    ai_default_language             text        REFERENCES languages (code),
    amd_detection_enabled           boolean     NOT NULL DEFAULT false,
    call_record_rule                text        NOT NULL DEFAULT 'client_is_connected'
        CHECK (call_record_rule IN ('client_is_connected', 'agent_is_connected')),
    sip_endpoint_usage_scheme       text        NOT NULL DEFAULT 'random_default'
        CHECK (sip_endpoint_usage_scheme IN ('random_default', 'random_without_repetition', 'even_loaded', 'even_loaded_daily')),
    agent_user_ids                  bigint[]    NOT NULL DEFAULT '{}',
    agent_group_ids                 bigint[]    NOT NULL DEFAULT '{}',
    show_lead_contacts_to_agent     boolean     NOT NULL DEFAULT false,
    call_attempt_group_id           bigint      REFERENCES call_attempt_groups (id),
    qualified_leads_per_day_limit   bigint      CHECK (qualified_leads_per_day_limit >= 1),
    call_scenario_id                bigint      CHECK (call_scenario_id >= 1),
    lead_transform_enabled          boolean     NOT NULL DEFAULT false,
    status                          text        NOT NULL CHECK (status IN ('success', 'secondary', 'info')),
    speech_recognition_enabled      boolean     NOT NULL DEFAULT false,
    ignore_lead_timezone            boolean     NOT NULL DEFAULT false,
    sip_endpoint_ids                bigint[]    NOT NULL CHECK (cardinality(sip_endpoint_ids) >= 1),
    -- Custom-field id (as text) to the value, already checked against the field's type.
    custom_values                   jsonb       NOT NULL DEFAULT '{}',
    agent_lead_creation_is_allowed  boolean     NOT NULL DEFAULT false,
    agent_lead_edit_mode            text        NOT NULL DEFAULT 'never'
        CHECK (agent_lead_edit_mode IN ('during-call', 'always', 'never')),
    auto_process_call               boolean     NOT NULL DEFAULT false,
    -- [{"number": "...", "names": {"ru": "..."}}]
    transfer_numbers                jsonb       NOT NULL DEFAULT '[]',
    created_at                      timestamptz NOT NULL DEFAULT now(),
    updated_at                      timestamptz NOT NULL DEFAULT now(),
    created_by                      bigint,
    updated_by                      bigint,
    CONSTRAINT orders_code_key UNIQUE (code)
);
CREATE INDEX orders_call_attempt_group_id ON orders (call_attempt_group_id);

-- +goose Down
DROP TABLE orders;
