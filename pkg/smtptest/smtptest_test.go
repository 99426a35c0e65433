package smtptest

import (
	"net/smtp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestKeepsWhatItReceivesAndSurvivesARestart(t *testing.T) {
	s, err := Start("127.0.0.1:0")
	require.NoError(t, err)
	defer s.Stop()
	msg := "From: a@example.com\r\nTo: b@example.com\r\nSubject: =?utf-8?b?0J3QvtCy0YvQuSDQu9C40LQ=?=\r\n\r\nhello\r\n"
	require.NoError(t, smtp.SendMail(s.Addr(), nil, "a@example.com", []string{"b@example.com"}, []byte(msg)))
	got := s.To("B@example.com")
	require.Len(t, got, 1)
	assert.Equal(t, "Новый лид", got[0].Subject)
	assert.Equal(t, "a@example.com", got[0].From)

	addr := s.Addr()
	s.Stop()
	assert.False(t, s.Running())
	assert.Error(t, smtp.SendMail(addr, nil, "a@example.com", []string{"b@example.com"}, []byte(msg)), "refused while stopped")
	require.NoError(t, s.Restart())
	assert.Equal(t, addr, s.Addr(), "the same address again")
	require.NoError(t, smtp.SendMail(addr, nil, "a@example.com", []string{"b@example.com"}, []byte(msg)))
	assert.Len(t, s.To("b@example.com"), 2)
}
