-- +goose Up
-- One row per recipient of a command. (command_id, user_id) is unique so that a redelivered
-- command stores nothing twice.
CREATE TABLE notifications (
    id          bigserial   PRIMARY KEY,
    command_id  uuid        NOT NULL,
    user_id     bigint      NOT NULL,
    title       text        NOT NULL,
    text        text        NOT NULL,
    priority    text        NOT NULL CHECK (priority IN ('default', 'urgent')),
    level       text        NOT NULL CHECK (level IN ('default', 'success', 'warning', 'danger')),
    created_at  timestamptz NOT NULL DEFAULT now(),
    read_at     timestamptz,
    CONSTRAINT notifications_command_user UNIQUE (command_id, user_id)
);
CREATE INDEX notifications_user ON notifications (user_id, id DESC);
CREATE INDEX notifications_user_unread ON notifications (user_id, id DESC) WHERE read_at IS NULL;

-- One row per notification and channel it must go out on; the delivery loop retries the pending
-- ones that are due, so a failing channel never blocks another or loses the record.
CREATE TABLE deliveries (
    notification_id  bigint      NOT NULL REFERENCES notifications (id) ON DELETE CASCADE,
    channel          text        NOT NULL CHECK (channel IN ('live', 'email', 'messenger')),
    destination      text        NOT NULL DEFAULT '',
    status           text        NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'failed')),
    attempts         int         NOT NULL DEFAULT 0,
    next_attempt_at  timestamptz NOT NULL DEFAULT now(),
    last_error       text,
    sent_at          timestamptz,
    updated_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (notification_id, channel)
);
CREATE INDEX deliveries_due ON deliveries (channel, next_attempt_at) WHERE status = 'pending';

-- +goose Down
DROP TABLE deliveries;
DROP TABLE notifications;
