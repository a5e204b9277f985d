package llm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
)

// Provider names the wire format a Server speaks.
type Provider string

// The providers a Server can speak.
const (
	// Anthropic is the Anthropic Messages API.
	Anthropic Provider = "anthropic"
	// OpenAI is the OpenAI Chat Completions API (and OpenAI-compatible servers
	// such as vLLM).
	OpenAI Provider = "openai"
)

// AnyModel is the plan key of every model that has no plan of its own.
const AnyModel = "*"

// ListModels is the plan key of the models listing (GET /v1/models and
// GET /v1/models/{id}). Without a plan of its own the listing always answers
// OK; it never follows AnyModel.
const ListModels = "_models"

// Model is one entry of the model list served by /v1/models.
type Model struct {
	ID string `json:"id"`
	// Created is the release time: Anthropic's created_at, OpenAI's created.
	Created time.Time `json:"created"`
	// DisplayName is Anthropic's display_name; empty derives it from ID
	// ("claude-opus-4-5" gives "Claude Opus 4.5").
	DisplayName string `json:"display_name,omitempty"`
	// OwnedBy is OpenAI's owned_by; empty gives "mcpchaos".
	OwnedBy string `json:"owned_by,omitempty"`
}

// DefaultModels returns the model list a Server of provider p serves when
// Options.Models is nil. The release dates are fixed and invented; within a
// line, a higher version is newer (claude-opus-5 is newer than claude-opus-4-5).
func DefaultModels(p Provider) []Model {
	day := func(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }
	if p == OpenAI {
		return []Model{
			{ID: "qwen3-32b", Created: day(2025, time.April, 29)},
			{ID: "gpt-4o-mini", Created: day(2024, time.July, 18)},
			{ID: "gpt-4.1-mini", Created: day(2025, time.April, 14)},
		}
	}
	return []Model{
		{ID: "claude-sonnet-4-5", Created: day(2025, time.September, 29)},
		{ID: "claude-haiku-4-5", Created: day(2025, time.October, 1)},
		{ID: "claude-opus-4-5", Created: day(2025, time.November, 24)},
		{ID: "claude-sonnet-5", Created: day(2026, time.March, 10)},
		{ID: "claude-opus-5", Created: day(2026, time.April, 16)},
	}
}

// Options configure a Server.
type Options struct {
	// Provider is the wire format: Anthropic or OpenAI. Required.
	Provider Provider
	// Addr is the listen address; empty means "127.0.0.1:0" (a free port).
	Addr string
	// Models is the list served by /v1/models; nil means DefaultModels(Provider).
	Models []Model
	// Default is the step of every model without a plan of its own; the zero
	// Step means OK.
	Default Step
	// APIKey, when set, is required on completion and model requests (Anthropic:
	// x-api-key, OpenAI: Authorization: Bearer); other keys get 401.
	APIKey string
	// Logger receives one line per LLM request; nil logs nothing.
	Logger *slog.Logger
	// OAuthGate gates Claude subscription OAuth tokens the way Anthropic does
	// outside its own client (Anthropic only; see oauth.go): 404 on model ids
	// the fake does not list, 429 on listed ones.
	OAuthGate bool
}

// Request is the record of one request to the provider's API: every request
// but those of the control API, unknown paths included.
type Request struct {
	// Seq numbers the requests of a Server from 1, in arrival order.
	Seq    int       `json:"seq"`
	Time   time.Time `json:"time"`
	Method string    `json:"method"`
	Path   string    `json:"path"`
	// Model is the request's "model" field (the model id for GET /v1/models/{id}).
	Model  string `json:"model,omitempty"`
	Stream bool   `json:"stream"`
	// Step is the behaviour applied. Requests the fake rejects on its own (a body
	// that is not a valid request, a wrong API key) show BadRequest or
	// Unauthorized with the reason as Text.
	Step Step `json:"step"`
	// Prompt is an excerpt of the last user message.
	Prompt string `json:"prompt,omitempty"`
	// Status is the HTTP status sent; 0 while none was (a hang before headers, a
	// reset).
	Status int `json:"status"`
	// Done is set once the fake has finished with the request; Duration is the
	// time it took.
	Done     bool          `json:"done"`
	Duration time.Duration `json:"duration"`
	// ClientGone is set when the client went away before the behaviour had
	// played out; FakeClosed when Close ended it.
	ClientGone bool `json:"client_gone,omitempty"`
	FakeClosed bool `json:"fake_closed,omitempty"`
}

// Server is a fake LLM server listening on a loopback port. It is safe for
// concurrent use.
type Server struct {
	opts    Options
	dialect dialect
	log     *slog.Logger
	url     string
	http    *http.Server
	ln      net.Listener
	stop    context.CancelFunc // cancels the base context of every request
	served  chan struct{}      // closed when the serve loop has returned

	closeOnce sync.Once
	closeErr  error
	handlers  sync.WaitGroup // LLM and control requests in their handlers

	mu        sync.Mutex
	closed    bool
	conns     map[net.Conn]struct{} // accepted, not yet closed or hijacked
	connsGone *sync.Cond            // signalled when conns empties
	scripts   map[string]*script
	models    []Model
	requests  []Request
	expects   map[string]int
	oauthGate bool
	ids       int // last id handed out by newID
	seq       int // Seq of the last recorded request; never reset
}

// New starts a fake LLM server for opts.Provider on opts.Addr.
func New(opts Options) (*Server, error) {
	var d dialect
	switch opts.Provider {
	case Anthropic:
		d = anthropicDialect{}
	case OpenAI:
		d = openAIDialect{}
	default:
		return nil, fmt.Errorf("llm: unknown provider %q (want %q or %q)", opts.Provider, Anthropic, OpenAI)
	}
	if opts.Default.Kind == "" {
		opts.Default = Do(OK)
	}
	if err := opts.Default.Validate(); err != nil {
		return nil, err
	}
	if opts.Models == nil {
		opts.Models = DefaultModels(opts.Provider)
	}
	opts.Models = slices.Clone(opts.Models)
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}

	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("llm: listen: %w", err)
	}
	base, stop := context.WithCancel(context.Background())
	s := &Server{
		opts:    opts,
		dialect: d,
		log:     logger,
		url:     "http://" + ln.Addr().String(),
		stop:    stop,
		served:  make(chan struct{}),
		conns:   make(map[net.Conn]struct{}),
	}
	s.connsGone = sync.NewCond(&s.mu)
	s.ln = &trackingListener{Listener: ln, s: s}
	s.resetLocked()
	s.http = &http.Server{
		Handler:           s.routes(),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return base },
		ConnState:         s.connState,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelDebug),
	}
	go func() {
		defer close(s.served)
		_ = s.http.Serve(s.ln) // returns when Close closes the listener
	}()
	return s, nil
}

// Serve runs a fake LLM server for opts until ctx is done, then closes it. It
// calls ready, if not nil, once the server listens (a CLI prints s.URL() there).
// It returns the error of New, or nil after a clean close.
func Serve(ctx context.Context, opts Options, ready func(*Server)) error {
	s, err := New(opts)
	if err != nil {
		return err
	}
	if ready != nil {
		ready(s)
	}
	<-ctx.Done()
	return s.Close()
}

// Provider returns the wire format the server speaks.
func (s *Server) Provider() Provider { return s.opts.Provider }

// URL returns the root URL of the server, "http://127.0.0.1:PORT": the base
// URL of Anthropic SDKs. OpenAI clients take URL() + "/v1" (see BaseURL).
func (s *Server) URL() string { return s.url }

// BaseURL returns the base URL a client of the server's provider is configured
// with: URL() for Anthropic, URL() + "/v1" for OpenAI.
func (s *Server) BaseURL() string {
	if s.opts.Provider == OpenAI {
		return s.url + "/v1"
	}
	return s.url
}

// Addr returns the host:port the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Set scripts the requests for model: the steps are played in order, one per
// request, and the last one repeats. Set(model) with no steps removes the
// model's plan (back to the default). model may be AnyModel (the default) or
// ListModels.
func (s *Server) Set(model string, steps ...Step) error {
	if len(steps) == 0 {
		s.Unset(model)
		return nil
	}
	return s.SetPlan(model, Plan{Steps: steps})
}

// SetRandom scripts the requests for model with seeded random draws.
func (s *Server) SetRandom(model string, r Random) error {
	return s.SetPlan(model, Plan{Random: &r})
}

// SetPlan scripts the requests for model with p, starting from its beginning.
func (s *Server) SetPlan(model string, p Plan) error {
	if model == "" {
		return errors.New("llm: empty model name")
	}
	if err := p.Validate(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scripts[model] = newScript(p)
	return nil
}

// Unset removes the plan of model, which then follows the default. Unset of
// AnyModel restores Options.Default.
func (s *Server) Unset(model string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.scripts, model)
	if model == AnyModel {
		s.scripts[AnyModel] = newScript(Plan{Steps: []Step{s.opts.Default}})
	}
}

// Plans returns the plan of every scripted model, AnyModel included.
func (s *Server) Plans() map[string]Plan {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]Plan, len(s.scripts))
	for model, sc := range s.scripts {
		out[model] = sc.plan.clone()
	}
	return out
}

// SetModels replaces the model list served by /v1/models.
func (s *Server) SetModels(models []Model) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.models = slices.Clone(models)
}

// Models returns the model list served by /v1/models, in configured order.
func (s *Server) Models() []Model {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.models)
}

// Requests returns the record of every request to /v1/... since New or the
// last ClearRequests, in arrival order. Requests still in progress have Done
// unset.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// ClearRequests forgets the recorded requests (and so the counts expectations
// are checked against).
func (s *Server) ClearRequests() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = nil
}

// Expect records that at least n completion requests for model are expected;
// Unmet reports it until they were recorded. n <= 0 drops the expectation.
func (s *Server) Expect(model string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n <= 0 {
		delete(s.expects, model)
		return
	}
	s.expects[model] = n
}

// Unmet returns one line per expectation that the recorded requests do not
// meet, sorted by model, such as "claude-opus-5: expected 2 request(s), got 1".
// It is empty when every expectation is met.
func (s *Server) Unmet() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	got := map[string]int{}
	for _, r := range s.requests {
		if r.Path == s.dialect.completionPath() {
			got[r.Model]++
		}
	}
	var out []string
	for model, want := range s.expects {
		if got[model] < want {
			out = append(out, fmt.Sprintf("%s: expected %d request(s), got %d", model, want, got[model]))
		}
	}
	sort.Strings(out)
	return out
}

// Reset brings plans, models, recorded requests and expectations back to how
// New set them up.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resetLocked()
}

func (s *Server) resetLocked() {
	s.scripts = map[string]*script{AnyModel: newScript(Plan{Steps: []Step{s.opts.Default}})}
	s.models = slices.Clone(s.opts.Models)
	s.requests = nil
	s.expects = map[string]int{}
	s.oauthGate = s.opts.OAuthGate
}

// Close stops the server: it ends every request in progress (hangs and stalls
// included), closes every connection, and returns once all handlers and
// connections are done. Later calls return the same result.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		conns := make([]net.Conn, 0, len(s.conns))
		for c := range s.conns {
			conns = append(conns, c)
		}
		s.mu.Unlock()

		// Connections go first, so that no response in progress can end
		// cleanly: a client in the middle of a stream sees it broken, not done.
		s.closeErr = s.http.Close()
		for _, c := range conns {
			_ = c.Close()
		}
		s.stop() // every request context is done: blocking behaviours return
		s.handlers.Wait()
		s.mu.Lock()
		for len(s.conns) > 0 {
			s.connsGone.Wait()
		}
		s.mu.Unlock()
		<-s.served
		if errors.Is(s.closeErr, net.ErrClosed) {
			s.closeErr = nil
		}
	})
	return s.closeErr
}

// step returns the step for the next request for model, and consumes it.
func (s *Server) step(model string) Step {
	s.mu.Lock()
	defer s.mu.Unlock()
	sc := s.scripts[model]
	if sc == nil && model == ListModels {
		return Do(OK)
	}
	if sc == nil {
		sc = s.scripts[AnyModel]
	}
	return sc.draw()
}

// newID returns a fresh id with prefix, numbered per server.
func (s *Server) newID(prefix string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ids++
	return fmt.Sprintf("%s%06d", prefix, s.ids)
}

// record appends r to the request log and returns its Seq.
func (s *Server) record(r Request) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	r.Seq = s.seq
	s.requests = append(s.requests, r)
	return r.Seq
}

// begin records r, the request c is serving, and returns its Seq. From then
// on the record's Status is set the moment c's headers go out, before the
// client can see any of the answer: a client that has read a streamed answer
// to its end finds its status recorded, though the handler may still run.
func (s *Server) begin(c *gin.Context, r Request) int {
	seq := s.record(r)
	c.Writer = &statusWriter{ResponseWriter: c.Writer, sent: func(status int) { s.sent(seq, status) }}
	return seq
}

// sent sets the status of the record seq, unless it is already done.
func (s *Server) sent(seq, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.requests) - 1; i >= 0; i-- {
		if r := &s.requests[i]; r.Seq == seq {
			if !r.Done {
				r.Status = status
			}
			return
		}
	}
}

// finish completes the record seq once its handler is done; first is false
// when it was already complete (or forgotten by ClearRequests meanwhile).
func (s *Server) finish(ctx context.Context, seq, status int, took time.Duration) (r Request, first bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.requests) - 1; i >= 0; i-- {
		r := &s.requests[i]
		if r.Seq != seq {
			continue
		}
		if r.Done {
			return *r, false
		}
		r.Status, r.Done, r.Duration = status, true, took
		if ctx.Err() != nil {
			if s.closed {
				r.FakeClosed = true
			} else {
				r.ClientGone = true
			}
		}
		return *r, true
	}
	return Request{}, false // forgotten by ClearRequests meanwhile
}

// statusWriter reports the status of a response once, the first time its
// headers may go out (a write or a flush); a hijacked connection sends none.
type statusWriter struct {
	gin.ResponseWriter
	sent     func(status int)
	reported bool
}

func (w *statusWriter) report() {
	if !w.reported {
		w.reported = true
		w.sent(w.ResponseWriter.Status())
	}
}

// WriteHeaderNow sends the headers, reporting the status first.
func (w *statusWriter) WriteHeaderNow() {
	w.report()
	w.ResponseWriter.WriteHeaderNow()
}

// Write sends body bytes (and the headers first), reporting the status first.
func (w *statusWriter) Write(b []byte) (int, error) {
	w.report()
	return w.ResponseWriter.Write(b)
}

// WriteString is Write for a string.
func (w *statusWriter) WriteString(str string) (int, error) {
	w.report()
	return w.ResponseWriter.WriteString(str)
}

// Flush sends what was written (and the headers), reporting the status first.
func (w *statusWriter) Flush() {
	w.report()
	w.ResponseWriter.Flush()
}

// trackingListener registers every accepted connection with the server, so
// Close can close and await connections that net/http has not tracked yet.
type trackingListener struct {
	net.Listener
	s *Server
}

// Accept returns the next connection, or net.ErrClosed once the server closes.
func (l *trackingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	if l.s.closed {
		_ = c.Close()
		return nil, net.ErrClosed
	}
	l.s.conns[c] = struct{}{}
	return c, nil
}

// connState forgets connections that net/http closed or handed to a handler.
func (s *Server) connState(c net.Conn, state http.ConnState) {
	if state != http.StateClosed && state != http.StateHijacked {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.conns, c)
	if len(s.conns) == 0 {
		s.connsGone.Broadcast()
	}
}

// ginMode puts gin in release mode once, unless the process chose a mode.
var ginMode sync.Once

func (s *Server) routes() *gin.Engine {
	ginMode.Do(func() {
		if gin.Mode() == gin.DebugMode {
			gin.SetMode(gin.ReleaseMode)
		}
	})
	e := gin.New()
	e.Use(s.track)
	v1 := e.Group("/v1")
	v1.POST(s.dialect.completionPath()[len("/v1"):], s.handleCompletion)
	v1.GET("/models", s.handleModels)
	v1.GET("/models/*id", s.handleModels)
	s.controlRoutes(e.Group("/_fake"))
	e.NoRoute(s.handleNoRoute)
	return e
}

// track counts handlers for Close, and refuses requests once it has begun.
func (s *Server) track(c *gin.Context) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		c.Header("Connection", "close")
		c.AbortWithStatus(http.StatusServiceUnavailable)
		return
	}
	s.handlers.Add(1)
	s.mu.Unlock()
	defer s.handlers.Done()
	c.Next()
}
