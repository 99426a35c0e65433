-- +goose Up
-- The call-status catalog: the outcome of a call as the telephony platform reports it (its code)
-- and the id the public API shows as statusId. Ids are fixed so that they mean the same thing in
-- every environment; `answered` tells whether a person picked up.
CREATE TABLE call_statuses (
    id       integer PRIMARY KEY CHECK (id > 0),
    code     text    NOT NULL UNIQUE CHECK (code ~ '^[a-z][a-z0-9_]*$'),
    name     text    NOT NULL,
    answered boolean NOT NULL
);

INSERT INTO call_statuses (id, code, name, answered) VALUES
    (1, 'answered',       'Answered',                        true),
    (2, 'no_answer',      'No answer',                       false),
    (3, 'busy',           'Busy',                            false),
    (4, 'failed',         'Failed (network or line error)',  false),
    (5, 'voicemail',      'Voicemail or answering machine',  false),
    (6, 'rejected',       'Rejected by the client',          false),
    (7, 'cancelled',      'Cancelled before the answer',     false),
    (8, 'invalid_number', 'Invalid or unreachable number',   false),
    (9, 'abandoned',      'Abandoned: no free agent',        true);

-- +goose Down
DROP TABLE call_statuses;
