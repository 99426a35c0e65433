-- +goose Up
-- Lead statuses. Only statuses of category in_progress may be given on create; success and
-- failure are final outcomes set later (by agents or call results).
CREATE TABLE lead_statuses (
    id        int  PRIMARY KEY CHECK (id > 0),
    code      text NOT NULL,
    name      text NOT NULL,
    category  text NOT NULL CHECK (category IN ('in_progress', 'success', 'failure')),
    CONSTRAINT lead_statuses_code_key UNIQUE (code)
);
INSERT INTO lead_statuses (id, code, name, category) VALUES
    (1, 'new',            'New',                'in_progress'),
    (2, 'callback',       'Call back',          'in_progress'),
    (3, 'no_answer',      'No answer',          'in_progress'),
    (4, 'qualified',      'Qualified',          'success'),
    (5, 'rejected',       'Rejected',           'failure'),
    (6, 'duplicate',      'Duplicate',          'failure'),
    (7, 'wrong_number',   'Wrong number',       'failure'),
    (8, 'busy',           'Line busy',          'in_progress'),
    (9, 'not_interested', 'Not interested',     'failure');


-- +goose Down
DROP TABLE lead_statuses;
