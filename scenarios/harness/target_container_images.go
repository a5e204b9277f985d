package harness

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/containerd/errdefs"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"
)

// The repositories of the images an ImageSet builds, FROM scratch, from
// static binaries built on this host. Nothing is ever pulled: the container
// target refuses an image that is not present locally.
const (
	// McplocalRepo runs `/mcplocal` (cmd/mcplocal): the proxy under test.
	McplocalRepo = "mcpchaos/mcplocal"
	// McpchaosRepo runs `/mcpchaos` (cmd/mcpchaos), which serves the fakes:
	// `mcpchaos fake upstream docmost --listen ADDR`.
	McpchaosRepo = "mcpchaos/mcpchaos"
	// ToxiproxyRepo runs `/toxiproxy-server -host 127.0.0.1` (toxiproxy v2's
	// cmd/server).
	ToxiproxyRepo = "mcpchaos/toxiproxy"
)

// Bounds of the Docker plumbing.
const (
	imageBuildCap    = 5 * time.Minute      // go build of three commands + three docker builds
	dockerScriptCap  = 3 * time.Minute      // scripts/docker.sh start: apt-get install + dockerd start
	imageLabel       = "org.mcpchaos.image" // which command the image runs
	imageRunLabel    = "org.mcpchaos.run"   // the tag of the ImageSet that built it
	ryukDisabledEnv  = "TESTCONTAINERS_RYUK_DISABLED"
	hostOverrideEnv  = "TESTCONTAINERS_HOST_OVERRIDE"
	dockerScriptPath = "scripts/docker.sh" // from the module root
)

// imageSpec is one image of the suite: a Go command, built static, alone in
// a scratch image.
type imageSpec struct {
	repo string
	pkg  string   // Go package of the command
	bin  string   // its file name in the image (at /)
	args []string // default CMD after the entrypoint
}

var imageSpecs = []imageSpec{
	{McplocalRepo, "github.com/mcpchaos/mcpchaos/cmd/mcplocal", "mcplocal", []string{"--help"}},
	{McpchaosRepo, "github.com/mcpchaos/mcpchaos/cmd/mcpchaos", "mcpchaos", []string{"--help"}},
	{ToxiproxyRepo, "github.com/Shopify/toxiproxy/v2/cmd/server", "toxiproxy-server", []string{"-host", "127.0.0.1", "-port", "8474"}},
}

// ImageSet is one build of the suite's images, all under one tag. Two suite
// runs may share one Docker daemon (scripts/docker.sh starts one for the
// machine): each builds and removes its own set, under a tag of its own, so
// that neither removes an image the other still runs.
type ImageSet struct{ tag string }

// NewImageSet returns a set under a tag unique to this call:
// test-<pid>-<8 random hex digits>.
func NewImageSet() *ImageSet {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return &ImageSet{tag: fmt.Sprintf("test-%d-%s", os.Getpid(), hex.EncodeToString(b[:]))}
}

// ImageSetTagged returns the set under tag, e.g. "test" for images to keep
// for manual use (`mcpchaos run --target container:mcpchaos/mcplocal:test`).
func ImageSetTagged(tag string) *ImageSet { return &ImageSet{tag: tag} }

// Tag is the tag every image of the set carries.
func (s *ImageSet) Tag() string { return s.tag }

// Mcplocal is the set's mcplocal image (see McplocalRepo).
func (s *ImageSet) Mcplocal() string { return McplocalRepo + ":" + s.tag }

// Mcpchaos is the set's mcpchaos image (see McpchaosRepo).
func (s *ImageSet) Mcpchaos() string { return McpchaosRepo + ":" + s.tag }

// Toxiproxy is the set's toxiproxy image (see ToxiproxyRepo).
func (s *ImageSet) Toxiproxy() string { return ToxiproxyRepo + ":" + s.tag }

// Images lists the references Build builds.
func (s *ImageSet) Images() []string {
	var out []string
	for _, im := range imageSpecs {
		out = append(out, im.repo+":"+s.tag)
	}
	return out
}

// labels are the labels of the set's image running bin.
func (s *ImageSet) labels(bin string) map[string]string {
	return map[string]string{imageLabel: bin, imageRunLabel: s.tag}
}

var dockerEnvOnce sync.Once

// DockerEnv sets the testcontainers settings this machine needs in the
// process environment, where they are unset: no Ryuk (its image would be
// pulled) and the daemon's host as 127.0.0.1. testcontainers reads them once
// per process, so this runs before any testcontainers call of the harness.
func DockerEnv() {
	dockerEnvOnce.Do(func() {
		for k, v := range map[string]string{ryukDisabledEnv: "true", hostOverrideEnv: "127.0.0.1"} {
			if _, ok := os.LookupEnv(k); !ok {
				_ = os.Setenv(k, v)
			}
		}
	})
}

// quietLogger routes testcontainers' chatter to w (or nowhere).
type quietLogger struct{ w io.Writer }

func (l quietLogger) Printf(format string, a ...any) {
	if l.w != nil {
		fmt.Fprintf(l.w, "testcontainers: "+strings.TrimRight(format, "\n")+"\n", a...)
	}
}

var _ tclog.Logger = quietLogger{}

// dockerProvider connects to the Docker daemon and checks that it answers.
// The error says what to do when it does not. Close the provider when done.
func dockerProvider(ctx context.Context, log io.Writer) (*testcontainers.DockerProvider, error) {
	DockerEnv()
	p, err := testcontainers.NewDockerProvider(testcontainers.WithLogger(quietLogger{log}))
	if err == nil {
		if err = p.Health(ctx); err != nil {
			_ = p.Close()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("Docker is not available (%v): start it with %s start (see docs/targets.md, Containers)", err, dockerScriptPath)
	}
	return p, nil
}

// DockerAvailable reports, with an error saying what to do, whether a Docker
// daemon answers. Call it only once Docker should be up: testcontainers
// caches the daemon's address (or its absence) for the process's lifetime.
func DockerAvailable(ctx context.Context) error {
	p, err := dockerProvider(ctx, nil)
	if err != nil {
		return err
	}
	return p.Close()
}

// EnsureDocker runs `scripts/docker.sh start`, which uses a working Docker or
// starts a dockerd of its own (installing docker.io as root if needed).
// started reports whether it started one, or shares one with another run
// that started it: then the caller calls StopDocker when done (which stops it
// once its last user is done). The output of the script is written to log.
func EnsureDocker(ctx context.Context, log io.Writer) (started bool, err error) {
	out, err := runDockerScript(ctx, "start")
	if log != nil {
		_, _ = log.Write(out)
	}
	if err != nil {
		return false, fmt.Errorf("%s start: %w\n%s", dockerScriptPath, err, out)
	}
	return bytes.Contains(out, []byte("docker: started")) || bytes.Contains(out, []byte("docker: shared")), nil
}

// StopDocker runs `scripts/docker.sh stop`: it stops only a dockerd that
// EnsureDocker started, and only when no other run still uses it.
func StopDocker(ctx context.Context, log io.Writer) error {
	out, err := runDockerScript(ctx, "stop")
	if log != nil {
		_, _ = log.Write(out)
	}
	if err != nil {
		return fmt.Errorf("%s stop: %w\n%s", dockerScriptPath, err, out)
	}
	return nil
}

func runDockerScript(ctx context.Context, verb string) ([]byte, error) {
	root, err := moduleRoot(ctx)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, dockerScriptCap)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(root, dockerScriptPath), verb)
	// This process is the daemon's user: start records it, stop takes it off
	// and stops the daemon only when no other user is left.
	cmd.Env = append(os.Environ(), fmt.Sprintf("MCPCHAOS_DOCKER_USER=%d", os.Getpid()))
	cmd.WaitDelay = 5 * time.Second // dockerd keeps no pipe of ours, but never hang on one
	return cmd.CombinedOutput()
}

// moduleRoot is the directory of this module's go.mod, found by `go env
// GOMOD` from the current directory (a test's package directory is inside).
func moduleRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("not inside the mcpchaos module (go env GOMOD is empty)")
	}
	return filepath.Dir(mod), nil
}

// Build builds the images of Images named by refs (every one when refs is
// empty): the commands are built static (CGO_ENABLED=0) on this host in one
// `go build`, then each goes alone into a FROM scratch image tagged with the
// set's tag and labelled with it (kept: one build serves the whole suite
// run). Nothing is pulled. Build output goes to log (may be nil).
func (s *ImageSet) Build(ctx context.Context, log io.Writer, refs ...string) error {
	ctx, cancel := context.WithTimeout(ctx, imageBuildCap)
	defer cancel()
	var todo []imageSpec
	for _, im := range imageSpecs {
		if len(refs) == 0 || slices.Contains(refs, im.repo+":"+s.tag) {
			todo = append(todo, im)
		}
	}
	if len(todo) != max(len(refs), len(todo)) {
		return fmt.Errorf("build images %v: want some of %v", refs, s.Images())
	}
	dir, err := os.MkdirTemp("", "mcpchaos-images-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "bin")
	args := []string{"build", "-o", bin + string(filepath.Separator)}
	for _, im := range todo {
		args = append(args, im.pkg)
	}
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("CGO_ENABLED=0 go %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	p, err := dockerProvider(ctx, log)
	if err != nil {
		return err
	}
	defer p.Close()
	for _, im := range todo {
		// go build names each binary after the last element of its package.
		built := filepath.Join(bin, filepath.Base(im.pkg))
		if err := s.buildImage(ctx, p, dir, built, im, log); err != nil {
			return err
		}
	}
	return nil
}

// buildImage writes a context dir (the binary, an empty /tmp, a Dockerfile)
// and builds it with testcontainers' FromDockerfile, keeping the image.
func (s *ImageSet) buildImage(ctx context.Context, p *testcontainers.DockerProvider, dir, built string, im imageSpec, log io.Writer) error {
	ctxDir := filepath.Join(dir, "context-"+im.bin)
	if err := os.MkdirAll(filepath.Join(ctxDir, "tmp"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(ctxDir, "tmp", ".keep"), nil, 0o644); err != nil {
		return err
	}
	if err := os.Rename(built, filepath.Join(ctxDir, im.bin)); err != nil {
		return err
	}
	quoted := func(ss []string) string {
		var q []string
		for _, s := range ss {
			q = append(q, fmt.Sprintf("%q", s))
		}
		return "[" + strings.Join(q, ", ") + "]"
	}
	dockerfile := fmt.Sprintf("FROM scratch\nCOPY %s /%s\nCOPY tmp /tmp\nENTRYPOINT %s\nCMD %s\n",
		im.bin, im.bin, quoted([]string{"/" + im.bin}), quoted(im.args))
	if err := os.WriteFile(filepath.Join(ctxDir, "Dockerfile"), []byte(dockerfile), 0o644); err != nil {
		return err
	}
	req := testcontainers.ContainerRequest{FromDockerfile: testcontainers.FromDockerfile{
		Context: ctxDir, Repo: im.repo, Tag: s.tag, KeepImage: true, BuildLogWriter: log,
		BuildOptionsModifier: func(o *client.ImageBuildOptions) {
			o.Labels = s.labels(im.bin)
		},
	}}
	if _, err := p.BuildImage(ctx, &req); err != nil {
		return fmt.Errorf("docker build %s:%s: %w", im.repo, s.tag, err)
	}
	return nil
}

// imageStore is the part of the Docker client Remove uses.
type imageStore interface {
	ImageList(ctx context.Context, options client.ImageListOptions) (client.ImageListResult, error)
	ImageRemove(ctx context.Context, ref string, options client.ImageRemoveOptions) (client.ImageRemoveResult, error)
}

// Remove removes the set's images (force: a leftover container of a crashed
// run does not keep them), and the untagged images this set's builds left
// behind (labelled with its tag). Images of other sets, another run's among
// them, are left alone; images already gone are fine.
func (s *ImageSet) Remove(ctx context.Context) error {
	p, err := dockerProvider(ctx, nil)
	if err != nil {
		return err
	}
	defer p.Close()
	return s.remove(ctx, p.Client())
}

func (s *ImageSet) remove(ctx context.Context, store imageStore) error {
	refs := s.Images()
	dangling, err := store.ImageList(ctx, client.ImageListOptions{
		Filters: make(client.Filters).Add("label", imageRunLabel+"="+s.tag).Add("dangling", "true"),
	})
	if err != nil {
		return fmt.Errorf("list images: %w", err)
	}
	for _, im := range dangling.Items {
		refs = append(refs, im.ID)
	}
	var errs []error
	for _, ref := range refs {
		_, err := store.ImageRemove(ctx, ref, client.ImageRemoveOptions{Force: true, PruneChildren: true})
		if err != nil && !errdefs.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("remove image %s: %w", ref, err))
		}
	}
	return errors.Join(errs...)
}

// localImage checks that image exists on the daemon, so that testcontainers
// never tries to pull it (`docker run --pull never`).
func localImage(ctx context.Context, p *testcontainers.DockerProvider, image string) error {
	_, err := p.Client().ImageInspect(ctx, image)
	switch {
	case errdefs.IsNotFound(err):
		return fmt.Errorf("image %s is not present locally and is never pulled: build it first (harness.ImageSet's Build builds %s:TAG, %s:TAG and %s:TAG)",
			image, McplocalRepo, McpchaosRepo, ToxiproxyRepo)
	case err != nil:
		return fmt.Errorf("inspect image %s: %w", image, err)
	}
	return nil
}
