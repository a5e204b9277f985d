package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/http/pprof"
	"net/url"
	"os"
	"os/signal"
	"sort"
	"strings"
	"testing"

	"github.com/mcpchaos/mcpchaos/fakes/floor"
	"github.com/mcpchaos/mcpchaos/proxy/config"
)

// The bench starts the processes it measures by command line: the floor as
// `mcpchaos fake floor ...` and mcplocal as `mcplocal serve ...`. The test
// binary stands in for both when run with those arguments, so that
// StartFloor and StartMcplocal are driven here without building either
// binary: as the floor it runs the real fakes/floor; as mcplocal it keeps
// mcplocal's command-line contract (serve --config --listen --pprof,
// /healthz, /projects/NAME/mcp, /debug/pprof) and forwards each project's
// endpoint to its one server.
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == "fake" && os.Args[2] == "floor" {
		os.Exit(standInFloor(os.Args[3:]))
	}
	if len(os.Args) > 1 && os.Args[1] == "serve" {
		os.Exit(standInMcplocal(os.Args[2:]))
	}
	os.Exit(m.Run())
}

// The stand-ins' behaviour is set through the environment they inherit.
const (
	// floorSilentEnv=1 makes the floor stand-in never listen.
	floorSilentEnv = "MCPCHAOS_BENCH_TEST_FLOOR_SILENT"
	// mcplocalHealthEnv: "exit" makes the mcplocal stand-in exit before
	// listening; "unready" makes its /healthz answer 503 for ever.
	mcplocalHealthEnv = "MCPCHAOS_BENCH_TEST_HEALTH"
)

func interrupted() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt)
}

func standInFloor(args []string) int {
	ctx, stop := interrupted()
	defer stop()
	fmt.Printf("stand-in floor pid %d\n", os.Getpid())
	if os.Getenv(floorSilentEnv) == "1" {
		fmt.Println("stand-in floor: staying silent")
		<-ctx.Done()
		return 0
	}
	if err := floor.Main(ctx, args, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// seenConfig is what the mcplocal stand-in was started with, as it serves
// it on /stand-in/config.
type seenConfig struct {
	Audit    string                       `json:"audit"`
	Relay    *bool                        `json:"relay"`
	Projects map[string]map[string]string `json:"projects"` // project → server → URL
	Env      []string                     `json:"env"`      // its MCPCTL_ variables
}

func standInMcplocal(args []string) int {
	ctx, stop := interrupted()
	defer stop()
	fmt.Printf("stand-in mcplocal pid %d\n", os.Getpid())
	if os.Getenv(mcplocalHealthEnv) == "exit" {
		fmt.Println("stand-in mcplocal: exiting before it listens")
		return 3
	}
	flags := map[string]string{}
	for i := 0; i+1 < len(args); i += 2 {
		flags[args[i]] = args[i+1]
	}
	cfg, err := config.Load(flags["--config"])
	if err != nil {
		fmt.Println(err)
		return 1
	}
	seen := seenConfig{Audit: cfg.Audit, Relay: cfg.Relay, Projects: map[string]map[string]string{}}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "MCPCTL_") {
			seen.Env = append(seen.Env, kv)
		}
	}
	sort.Strings(seen.Env)
	mux := http.NewServeMux()
	for name, p := range cfg.Projects {
		seen.Projects[name] = map[string]string{}
		for sname, s := range p.Servers {
			seen.Projects[name][sname] = s.URL
			to, err := url.Parse(s.URL)
			if err != nil {
				fmt.Println(err)
				return 1
			}
			mux.Handle("/projects/"+name+"/mcp", &httputil.ReverseProxy{
				Rewrite:       func(r *httputil.ProxyRequest) { r.Out.URL, r.Out.Host = to, "" },
				FlushInterval: -1,
			})
		}
	}
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		if os.Getenv(mcplocalHealthEnv) == "unready" {
			fmt.Println("stand-in mcplocal: answered /healthz not ready")
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/stand-in/config", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(seen)
	})
	profiles := http.NewServeMux()
	profiles.HandleFunc("/debug/pprof/", pprof.Index)
	errs := make(chan error, 2)
	for addr, h := range map[string]http.Handler{flags["--listen"]: mux, flags["--pprof"]: profiles} {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			fmt.Println(err)
			return 1
		}
		srv := &http.Server{Handler: h}
		go func() { errs <- srv.Serve(ln) }()
		go func() { <-ctx.Done(); _ = srv.Close() }()
	}
	fmt.Printf("stand-in mcplocal serving at %s\n", flags["--listen"])
	select {
	case <-ctx.Done():
		return 0
	case err := <-errs:
		fmt.Println(err)
		return 1
	}
}
