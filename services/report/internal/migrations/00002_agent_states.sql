-- +goose Up
-- The agents' state history as agent.state.changed announced it (late events included), so that a
-- late event can split the segment it falls in: each row's state lasts until the next row's at.
CREATE TABLE agent_states (
    user_id      bigint      NOT NULL,
    at           timestamptz NOT NULL,
    event_id     text        NOT NULL,
    state        text        NOT NULL,
    pause_reason text        NOT NULL DEFAULT '',
    order_id     bigint      NOT NULL DEFAULT 0,
    PRIMARY KEY (user_id, at, event_id)
);

-- Milliseconds each agent spent in each state (by pause reason and order; '' and 0 for none) per
-- 15-minute bucket, over the closed segments of the history (a segment closes when the next state
-- arrives; the open one is added when a report is read).
CREATE TABLE agent_state_buckets (
    user_id      bigint      NOT NULL,
    bucket       timestamptz NOT NULL,
    state        text        NOT NULL,
    pause_reason text        NOT NULL,
    order_id     bigint      NOT NULL,
    ms           bigint      NOT NULL DEFAULT 0,
    PRIMARY KEY (user_id, bucket, state, pause_reason, order_id)
);
CREATE INDEX agent_state_buckets_order_idx ON agent_state_buckets (order_id, bucket);

-- Calls of each agent per bucket and order: calls, those they talked on (status answered), talk.
CREATE TABLE agent_call_buckets (
    user_id      bigint      NOT NULL,
    bucket       timestamptz NOT NULL,
    order_id     bigint      NOT NULL,
    calls        bigint      NOT NULL DEFAULT 0,
    handled      bigint      NOT NULL DEFAULT 0,
    talk_seconds bigint      NOT NULL DEFAULT 0,
    PRIMARY KEY (user_id, bucket, order_id)
);

-- +goose Down
DROP TABLE agent_call_buckets;
DROP TABLE agent_state_buckets;
DROP TABLE agent_states;
