package scenarios_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/mcpchaos/mcpchaos/scenarios/catalogue"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
	"github.com/mcpchaos/mcpchaos/scenarios/mutants"
)

// Everything the suite's specs run is built here, before any spec starts:
// mcplocal and mcpctl, and, when this run selects specs that need them, the
// container target's images (their static binaries compiled on this host),
// the foreign mutant's mcplocal and a plain mcpchaos for the fake proxies.
// A spec's timeout then bounds only the
// behaviour it checks: a busy machine makes a build slower, never a spec red
// (TestNothingIsBuiltInsideASpec holds every build call to this node).

// prebuildTimeout bounds the builds themselves (cold CGO_ENABLED=0 compiles of
// three commands among them), far past what they take on a loaded machine:
// it is no spec's budget.
const prebuildTimeout = 30 * time.Minute

// foreignMutant is the known regression the foreign-mutant specs run as a
// foreign proxy.
const foreignMutant = "delete-empty-json-rejected"

// built is what the first process built, for every process of the run.
type built struct {
	Mcplocal string
	// ImageTag is the tag of the container target's images; ImageErr why
	// they could not be built (Docker missing): the container specs fail
	// with it, they never skip.
	ImageTag, ImageErr string
	// Foreign is the foreign mutant's mcplocal; ForeignErr why it could not
	// be built.
	Foreign, ForeignErr string
	// Mcpchaos is a plain (no -race) mcpchaos for the specs that run
	// `mcpchaos fake proxy` as the proxy under test, built when the run
	// selects one of them (fakeProxySpecs); empty, they run this test
	// binary in its place.
	Mcpchaos string
}

var (
	// mcplocalPath and mcpctlPath are the binaries built once for the whole suite.
	mcplocalPath, mcpctlPath string
	// containerImages is the container target's image set, nil until built.
	containerImages *harness.ImageSet
	prebuiltOnce    built
)

// The texts of the specs whose builds prebuild_test.go makes only when the
// run selects one of them.
const (
	containerDescribe     = "The fault catalogue against the container target"
	containerServicesSpec = "serves the fake docmost behind toxiproxy from their own images"
	containerWarmSpec     = "keeps one container for two rows of a warm run: mcplocal's image, and the same image as a foreign spec"
	foreignMutantDescribe = "A foreign proxy built with a mutant"
)

var foreignMutantSpecs = []string{
	"breaks the DELETE promise, and the report says which",
	"still keeps the promises the mutant does not touch",
	"reports scenarios needing capabilities the spec does not claim as not applicable, by name",
}

// catalogueSpecText is the text of scenario s's spec on a target.
func catalogueSpecText(s catalogue.Scenario) string {
	return s.Name() + " holds promise " + s.Promise
}

// specID is what Ginkgo selects a spec by: its full text (its containers'
// texts and its own, joined by spaces) and its labels.
type specID struct {
	text   string
	labels []string
}

// containerSpecs are the container target's specs (container_test.go): one
// per catalogue scenario the target runs, and the services spec.
func containerSpecs() []specID {
	ids := []specID{{containerDescribe + " " + containerServicesSpec, []string{"container"}}, {containerDescribe + " " + containerWarmSpec, []string{"container"}}}
	for _, s := range catalogue.All() {
		if s.NotApplicable(&harness.Container{}) == "" {
			ids = append(ids, specID{containerDescribe + " " + catalogueSpecText(s), append([]string{"container"}, s.Labels...)})
		}
	}
	return ids
}

// The specs that start `mcpchaos fake proxy` for each catalogue row: the
// example proxy shapes' catalogue runs (shapes_test.go) and the plain
// foreign proxy's (foreign_plain_test.go).
const (
	shapesDescribe = "Example proxy shapes"
	shapesRunSpec  = "fails no row: an honest proxy breaks no promise it made"
	plainDescribe  = "A plain foreign proxy"
)

// shapeNames are the example proxy shapes whose catalogue runs.
var shapeNames = []string{"aggregate", "stateless-paths"}

var plainSpecs = []string{
	"runs the generic scenarios, and reports the rest not applicable by name",
	"passes where the proxy keeps the promise, though it has no trace codes and other tool names",
	"names the promise each failing row broke, every one, none of them mcplocal's own",
}

// fakeProxySpecs are the specs that run a fake proxy per catalogue row: a
// plain mcpchaos starts in a fraction of the race-built test binary's time.
func fakeProxySpecs() []specID {
	var ids []specID
	for _, n := range shapeNames {
		ids = append(ids, specID{shapesDescribe + " the " + n + " example proxy " + shapesRunSpec, []string{"foreign", "shapes"}})
	}
	for _, t := range plainSpecs {
		ids = append(ids, specID{plainDescribe + " " + t, []string{"foreign", "tiers"}})
	}
	return ids
}

// fakeProxyCommand is what runs `mcpchaos fake proxy` for those specs, and
// the environment it needs: the plain mcpchaos built before the suite, or
// this test binary in its place (asMcpchaosEnv).
func fakeProxyCommand() (string, map[string]string) {
	if prebuiltOnce.Mcpchaos != "" {
		return prebuiltOnce.Mcpchaos, nil
	}
	self, err := filepath.Abs(os.Args[0])
	Expect(err).NotTo(HaveOccurred())
	return self, map[string]string{asMcpchaosEnv: "1"}
}

// foreignSpecs are the foreign mutant's specs (foreign_mutant_test.go).
func foreignSpecs() []specID {
	var ids []specID
	for _, t := range foreignMutantSpecs {
		ids = append(ids, specID{foreignMutantDescribe + " " + t, []string{"foreign"}})
	}
	return ids
}

// selected reports whether this run selects one of specs, as Ginkgo does:
// by the label filter, the --focus and the --skip regexps.
func selected(specs []specID) bool {
	cfg, _ := GinkgoConfiguration()
	filter := cfg.LabelFilter
	matches := func(res []string, text string) bool {
		for _, r := range res {
			if regexp.MustCompile(r).MatchString(text) {
				return true
			}
		}
		return false
	}
	for _, s := range specs {
		if !Label(s.labels...).MatchesLabelFilter(filter) {
			continue
		}
		if len(cfg.FocusStrings) > 0 && !matches(cfg.FocusStrings, s.text) {
			continue
		}
		if matches(cfg.SkipStrings, s.text) {
			continue
		}
		return true
	}
	return false
}

var _ = SynchronizedBeforeSuite(func(ctx SpecContext) []byte {
	dir, err := os.MkdirTemp("", "mcpchaos-bin-")
	Expect(err).NotTo(HaveOccurred())
	var b built
	b.Mcplocal = filepath.Join(dir, "mcplocal")
	if prebuilt := os.Getenv("MCPCHAOS_MCPLOCAL"); prebuilt != "" {
		// mcpchaos canary runs these specs against a proxy built elsewhere
		// (the baseline's, while the clients here run on a candidate SDK).
		bin, err := os.ReadFile(prebuilt)
		Expect(err).NotTo(HaveOccurred(), "MCPCHAOS_MCPLOCAL")
		Expect(os.WriteFile(b.Mcplocal, bin, 0o755)).To(Succeed())
	} else {
		_, err = harness.BuildMcplocal(ctx, dir)
		Expect(err).NotTo(HaveOccurred())
	}
	if prebuilt := os.Getenv("MCPCHAOS_MCPCTL"); prebuilt != "" {
		// mcpchaos mutants builds both binaries before the suite (a mutant
		// that breaks them is an error of its run, not a kill).
		bin, err := os.ReadFile(prebuilt)
		Expect(err).NotTo(HaveOccurred(), "MCPCHAOS_MCPCTL")
		Expect(os.WriteFile(filepath.Join(dir, "mcpctl"), bin, 0o755)).To(Succeed())
	} else {
		_, err = harness.BuildCommand(ctx, dir, "mcpctl")
		Expect(err).NotTo(HaveOccurred())
	}
	if selected(foreignSpecs()) {
		By("building the foreign mutant's mcplocal (" + foreignMutant + ")")
		foreign := filepath.Join(dir, "foreign")
		Expect(os.MkdirAll(foreign, 0o755)).To(Succeed())
		if bin, err := mutants.Build(ctx, foreignMutant, foreign); err != nil {
			b.ForeignErr = err.Error()
		} else {
			b.Foreign = bin
		}
	}
	if selected(fakeProxySpecs()) {
		By("building a plain mcpchaos for the fake proxies")
		b.Mcpchaos, err = harness.BuildCommand(ctx, dir, "mcpchaos")
		Expect(err).NotTo(HaveOccurred())
	}
	if selected(containerSpecs()) {
		b.ImageTag, b.ImageErr = buildImages(ctx)
	}
	out, err := json.Marshal(b)
	Expect(err).NotTo(HaveOccurred())
	return out
}, func(data []byte) {
	Expect(json.Unmarshal(data, &prebuiltOnce)).To(Succeed())
	mcplocalPath = prebuiltOnce.Mcplocal
	mcpctlPath = filepath.Join(filepath.Dir(mcplocalPath), "mcpctl")
	if prebuiltOnce.ImageTag != "" {
		containerImages = harness.ImageSetTagged(prebuiltOnce.ImageTag)
	}
}, NodeTimeout(prebuildTimeout))

var _ = SynchronizedAfterSuite(func() {}, func() {
	if mcplocalPath != "" {
		_ = os.RemoveAll(filepath.Dir(mcplocalPath))
	}
})

// buildImages makes sure Docker runs (scripts/docker.sh start) and builds
// the container target's images FROM scratch from static binaries (nothing
// pulled), under a tag of this run's own: another suite run on the same
// Docker daemon builds and removes its own. It returns the tag, or why the
// images could not be built. Docker (if this started it) is stopped and the
// images removed after the suite.
func buildImages(ctx SpecContext) (tag, why string) {
	started, err := harness.EnsureDocker(ctx, GinkgoWriter)
	if err != nil {
		return "", "the container specs need Docker and never skip: " + err.Error()
	}
	if started {
		DeferCleanup(func(ctx SpecContext) {
			Expect(harness.StopDocker(ctx, GinkgoWriter)).To(Succeed())
		}, NodeTimeout(dockerCleanup))
	}
	if err := harness.DockerAvailable(ctx); err != nil {
		return "", "the container specs need Docker and never skip: " + err.Error()
	}
	images := harness.NewImageSet()
	By("building the images FROM scratch from static binaries (nothing pulled), tagged " + images.Tag())
	start := time.Now()
	DeferCleanup(func(ctx SpecContext) {
		Expect(images.Remove(ctx)).To(Succeed())
	}, NodeTimeout(dockerCleanup))
	if err := images.Build(ctx, GinkgoWriter); err != nil {
		return "", err.Error()
	}
	AddReportEntry("image build", time.Since(start).Round(time.Millisecond).String())
	return images.Tag(), ""
}
