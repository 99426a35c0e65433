-- +goose Up
-- Every agent state event accepted, from the telephony platform (telephony.agents) or set through
-- the API, once by its event id: the history reports read the time in each state from.
CREATE TABLE agent_state_events (
    event_id     text        PRIMARY KEY,
    user_id      bigint      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    state        text        NOT NULL
        CHECK (state IN ('offline', 'available', 'ringing', 'on-call', 'wrap-up', 'paused')),
    pause_reason text,
    order_id     bigint,
    at           timestamptz NOT NULL,
    source       text        NOT NULL CHECK (source IN ('telephony', 'api')),
    received_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX agent_state_events_user_at_idx ON agent_state_events (user_id, at);

-- Each agent's current state: the event with the newest `at` (an older one arriving late stays in
-- the history only).
CREATE TABLE agent_states (
    user_id      bigint      PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    state        text        NOT NULL,
    pause_reason text,
    order_id     bigint,
    since        timestamptz NOT NULL,
    event_id     text        NOT NULL
);
CREATE INDEX agent_states_state_idx ON agent_states (state);

-- +goose Down
DROP TABLE agent_states;
DROP TABLE agent_state_events;
