package imports

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/customfield"
	"ccplatform/pkg/identity"
	"ccplatform/pkg/listquery"
	"ccplatform/pkg/logging"
	"ccplatform/pkg/web"
	"ccplatform/services/lead/internal/asynccreate"
	"ccplatform/services/lead/internal/lead"
	"ccplatform/services/lead/internal/upload"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
	"go.uber.org/zap"
)

// Limits of one import (README.md, "Bulk lead import").
const (
	// MaxBody is the import route's own body limit; every other route keeps web.DefaultBodyLimit.
	MaxBody = 64 << 20
	MaxRows = 200_000
	// storeTime is how long storing a received file's rows may take before the answer, beyond
	// the upload's own time (upload.Limits.Whole): the server's write deadline is sized for small
	// answers.
	storeTime  = 2 * time.Minute
	maxCodeLen = 100
)

// The formats of a file, by Content-Type.
const (
	FormatCSV    = "csv"
	FormatNDJSON = "ndjson"
)

var formats = map[string]string{"text/csv": FormatCSV, "application/x-ndjson": FormatNDJSON}

// Fields reads the custom fields a CSV header names.
type Fields func(ctx context.Context, ids []int64) (map[int64]customfield.Field, error)

// Handler serves the import routes.
type Handler struct {
	log     *zap.Logger
	store   *Store
	ids     *asynccreate.IDs
	fields  Fields
	uploads *upload.Gate
}

// NewHandler keeps imports in store; ids names them (only their creator can read them back, as
// with async jobs); uploads admits and bounds the files while they arrive.
func NewHandler(store *Store, ids *asynccreate.IDs, fields Fields, uploads *upload.Gate, log *zap.Logger) *Handler {
	return &Handler{log: log, store: store, ids: ids, fields: fields, uploads: uploads}
}

// Routes registers the import routes on r, which must require the internal token and bound the
// body at MaxBody (not lower).
func (h *Handler) Routes(r gin.IRouter) {
	r.POST("/v2/lead/import", h.create)
	r.GET("/v2/lead/import/:importId", web.Handle(h.detail))
	r.GET("/v2/lead/import/:importId/rows", h.rows)
}

// View is an import on the wire.
type View struct {
	ID          string  `json:"id"`
	State       string  `json:"state"`
	Format      string  `json:"format"`
	OrderID     *int64  `json:"orderId"`
	OrderCode   *string `json:"orderCode"`
	RowsTotal   int     `json:"rowsTotal"`
	RowsDone    int     `json:"rowsDone"`
	RowsCreated int     `json:"rowsCreated"`
	RowsRefused int     `json:"rowsRefused"`
	Error       *string `json:"error"`
	CreatedAt   string  `json:"createdAt"`
	StartedAt   *string `json:"startedAt"`
	FinishedAt  *string `json:"finishedAt"`
}

// ViewOf is imp as the routes answer it.
func ViewOf(imp Import) View {
	return View{ID: imp.ID.String(), State: imp.State, Format: imp.Format, OrderID: imp.OrderID,
		OrderCode: imp.OrderCode, RowsTotal: imp.RowsTotal, RowsDone: imp.RowsDone, RowsCreated: imp.RowsCreated,
		RowsRefused: imp.RowsRefused, Error: imp.Error, CreatedAt: imp.CreatedAt.Format(lead.TimeLayout),
		StartedAt: timeText(imp.StartedAt), FinishedAt: timeText(imp.FinishedAt)}
}

func timeText(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := t.Format(lead.TimeLayout)
	return &s
}

// RowView is a row's result on the wire.
type RowView struct {
	Row    int               `json:"row"`
	Status string            `json:"status"`
	LeadID *int64            `json:"leadId"`
	Errors map[string]string `json:"errors"`
}

// create stores the file's rows and answers 202 with the queued import.
func (h *Handler) create(c *gin.Context) {
	view, err := h.accept(c)
	if err != nil {
		web.Fail(c, err)
		return
	}
	c.JSON(http.StatusAccepted, web.Envelope{Success: true, Data: view})
}

func (h *Handler) accept(c *gin.Context) (View, error) {
	// Until the whole body is in, an answer closes the connection: the server would otherwise read
	// the rest of the body first, as slowly as the client sends it, to keep the connection.
	c.Header("Connection", "close")
	mt, params, _ := mime.ParseMediaType(c.GetHeader("Content-Type"))
	format, ok := formats[mt]
	if !ok {
		return View{}, apperr.New(apperr.UnsupportedMediaType, "Content-Type: must be text/csv or application/x-ndjson")
	}
	cs, err := charsetOf(format, params["charset"])
	if err != nil {
		return View{}, err
	}
	q := c.Request.URL.Query()
	fe := apperr.FieldErrors{}
	caller := identity.Of(c)
	imp := Import{ID: h.ids.New(caller.UserID), Format: format, AccessGroup: caller.AccessGroup,
		UserID: caller.Ref(), IP: web.ClientIP(c)}
	imp.OrderID, imp.OrderCode = orderDefaults(q.Get("orderId"), q.Get("orderCode"), fe)
	if err := fe.Err(); err != nil {
		return View{}, err
	}
	file, leave, err := h.receive(c, caller)
	if err != nil {
		return View{}, err
	}
	c.Writer.Header().Del("Connection")
	defer leave()
	defer func() {
		if err := file.Close(); err != nil {
			logging.From(c.Request.Context(), h.log).Warn("lead imports: spooled upload not removed", zap.Error(err))
		}
	}()

	body := bufio.NewReaderSize(file, 64<<10)
	var rows Rows
	if format == FormatCSV {
		cr, err := newCSV(body, cs, func(ids []int64) (map[int64]customfield.Field, error) {
			return h.fields(c.Request.Context(), ids)
		})
		if err != nil {
			return View{}, err
		}
		for field, given := range map[string]bool{"orderId": imp.OrderID != nil, "orderCode": imp.OrderCode != nil} {
			if !given && !cr.names(field) {
				fe.Add(field, "is required: send it as a query parameter or a column")
			}
		}
		if err := fe.Err(); err != nil {
			return View{}, err
		}
		rows = cr
	} else {
		rows = newNDJSON(body)
	}
	stored, err := h.store.Create(c.Request.Context(), imp, rows, MaxRows)
	if errors.Is(err, ErrStatsStale) {
		logging.From(c.Request.Context(), h.log).Warn("lead imports: import stored, statistics not refreshed", zap.Error(err))
		err = nil
	}
	if err != nil {
		return View{}, err
	}
	// The request id (in the logger) and the import id, together: lead-worker logs by import.
	logging.From(c.Request.Context(), h.log).Info("lead imports: import accepted", zap.Stringer("import", stored.ID),
		zap.Int("rows", stored.RowsTotal))
	return ViewOf(stored), nil
}

// receive takes the whole file onto disk before the import touches the database: a transaction
// opened while a slow client trickles its body would hold a connection of the pool as long. The
// uploads in progress are bounded per API key and in all (429 with Retry-After past either);
// leave ends this one.
func (h *Handler) receive(c *gin.Context, caller identity.Caller) (*upload.File, func(), error) {
	key := caller.KeyID
	if key <= 0 {
		key = -caller.UserID // a call without a key (another service's): one bucket per user
	}
	leave, err := h.uploads.Enter(key)
	if err != nil {
		if upload.Refused(err) {
			upload.SetRetryAfter(c.Writer.Header())
		}
		return nil, nil, err
	}
	// A whole file takes longer to arrive and be stored than the server's write deadline allows.
	_ = http.NewResponseController(c.Writer).SetWriteDeadline(time.Now().Add(h.uploads.Limits().Whole + storeTime))
	file, err := upload.Spool(c.Writer, c.Request.Body, h.uploads.Limits())
	if err != nil {
		leave()
		return nil, nil, err
	}
	return file, leave, nil
}

// orderDefaults reads the orderId and orderCode query parameters, which fill rows without their
// own.
func orderDefaults(rawID, rawCode string, fe apperr.FieldErrors) (*int64, *string) {
	var id *int64
	var code *string
	if rawID != "" {
		n, err := strconv.ParseInt(rawID, 10, 64)
		if err != nil || n <= 0 {
			fe.Add("orderId", "must be an integer > 0")
		} else {
			id = &n
		}
	}
	if rawCode != "" {
		if utf8.RuneCountInString(rawCode) > maxCodeLen {
			fe.Addf("orderCode", "must be at most %d characters", maxCodeLen)
		} else {
			code = &rawCode
		}
	}
	return id, code
}

// find is the import the path names, if the caller created it: another's import answers like none.
func (h *Handler) find(c *gin.Context) (Import, error) {
	id, err := uuid.Parse(c.Param("importId"))
	if err != nil {
		return Import{}, apperr.Field("importId", "must be a UUID")
	}
	if !h.ids.Verify(id, identity.Of(c).UserID) {
		return Import{}, apperr.NotFoundf("import %s does not exist", id)
	}
	return h.store.Get(c.Request.Context(), id)
}

func (h *Handler) detail(c *gin.Context) (any, error) {
	imp, err := h.find(c)
	if err != nil {
		return nil, err
	}
	return ViewOf(imp), nil
}

// rows answers an import's row results: a page of JSON, or all of them as CSV when the caller
// accepts text/csv.
func (h *Handler) rows(c *gin.Context) {
	q := c.Request.URL.Query()
	fe := apperr.FieldErrors{}
	status := q.Get("status")
	if status != "" && status != RowPending && status != RowCreated && status != RowRefused {
		fe.Add("status", "must be one of: pending, created, refused")
	}
	page := listquery.ParsePage(q, fe)
	imp, err := h.find(c)
	if err == nil {
		err = fe.Err()
	}
	if err != nil {
		web.Fail(c, err)
		return
	}
	if c.NegotiateFormat(gin.MIMEJSON, "text/csv") == "text/csv" {
		h.csv(c, imp, status)
		return
	}
	list, total, err := h.store.Rows(c.Request.Context(), imp.ID, status, page.Offset, page.Limit)
	if err != nil {
		web.Fail(c, err)
		return
	}
	views := make([]RowView, len(list))
	for i, r := range list {
		views[i] = rowView(r)
	}
	web.OK(c, listquery.NewResult(views, page, total))
}

func rowView(r RowResult) RowView {
	v := RowView{Row: r.Row, Status: r.Status, LeadID: r.LeadID}
	if len(r.Errors) > 0 {
		_ = json.Unmarshal(r.Errors, &v.Errors) // written by record from a map of strings
	}
	return v
}

// csv streams the rows as text/csv: row, status, leadId, errors (the {field: rule} JSON).
func (h *Handler) csv(c *gin.Context, imp Import, status string) {
	c.Header("Content-Type", "text/csv; charset=utf-8")
	c.Header("Content-Disposition", `attachment; filename="import-`+imp.ID.String()+`-rows.csv"`)
	c.Status(http.StatusOK)
	w := csv.NewWriter(c.Writer)
	_ = w.Write([]string{"row", "status", "leadId", "errors"})
	err := h.store.EachRow(c.Request.Context(), imp.ID, status, func(r RowResult) error {
		lid := ""
		if r.LeadID != nil {
			lid = strconv.FormatInt(*r.LeadID, 10)
		}
		return w.Write([]string{strconv.Itoa(r.Row), r.Status, lid, string(r.Errors)})
	})
	w.Flush()
	if err != nil {
		// The status is out: all that is left is to cut the answer short, which the caller sees as
		// a broken download rather than a short list.
		panic(http.ErrAbortHandler)
	}
}
