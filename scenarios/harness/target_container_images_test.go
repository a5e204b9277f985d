package harness

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/image"
	"github.com/moby/moby/client"
)

// Two suite runs on one Docker daemon build their images under tags of their
// own, so neither removes what the other still runs.
func TestTwoImageSetsHaveTheirOwnTags(t *testing.T) {
	a, b := NewImageSet(), NewImageSet()
	if a.Tag() == b.Tag() {
		t.Fatalf("two image sets share the tag %q", a.Tag())
	}
	for _, s := range []*ImageSet{a, b} {
		want := []string{McplocalRepo + ":" + s.Tag(), McpchaosRepo + ":" + s.Tag(), ToxiproxyRepo + ":" + s.Tag()}
		if got := s.Images(); !slices.Equal(got, want) {
			t.Errorf("Images() = %v; want %v", got, want)
		}
		if s.Mcplocal() != want[0] || s.Mcpchaos() != want[1] || s.Toxiproxy() != want[2] {
			t.Errorf("Mcplocal/Mcpchaos/Toxiproxy = %s %s %s; want %v", s.Mcplocal(), s.Mcpchaos(), s.Toxiproxy(), want)
		}
		if !strings.HasPrefix(s.Tag(), "test-") {
			t.Errorf("tag %q does not start with test-", s.Tag())
		}
	}
	if got := ImageSetTagged("test").Mcplocal(); got != "mcpchaos/mcplocal:test" {
		t.Errorf("ImageSetTagged(test).Mcplocal() = %q", got)
	}
}

// fakeImages is a daemon's image store: by id, each with its tags and labels.
type fakeImages struct {
	items   []image.Summary
	removed []string
}

func (f *fakeImages) ImageList(_ context.Context, o client.ImageListOptions) (client.ImageListResult, error) {
	var out []image.Summary
	for _, im := range f.items {
		ok := true
		for term, vals := range o.Filters {
			for v := range vals {
				switch term {
				case "label":
					k, want, hasVal := strings.Cut(v, "=")
					got, has := im.Labels[k]
					ok = ok && has && (!hasVal || got == want)
				case "dangling":
					ok = ok && (len(im.RepoTags) == 0) == (v == "true")
				default:
					panic("filter " + term)
				}
			}
		}
		if ok {
			out = append(out, im)
		}
	}
	return client.ImageListResult{Items: out}, nil
}

func (f *fakeImages) ImageRemove(_ context.Context, ref string, _ client.ImageRemoveOptions) (client.ImageRemoveResult, error) {
	for i, im := range f.items {
		if im.ID == ref {
			f.items = slices.Delete(f.items, i, i+1)
			f.removed = append(f.removed, ref)
			return client.ImageRemoveResult{}, nil
		}
		if j := slices.Index(im.RepoTags, ref); j >= 0 {
			f.items[i].RepoTags = slices.Delete(slices.Clone(im.RepoTags), j, j+1)
			f.removed = append(f.removed, ref)
			return client.ImageRemoveResult{}, nil
		}
	}
	return client.ImageRemoveResult{}, errdefs.ErrNotFound
}

func TestRemoveImagesRemovesOnlyItsOwnRunsImages(t *testing.T) {
	mine, theirs := NewImageSet(), NewImageSet()
	store := &fakeImages{}
	add := func(s *ImageSet, id string, tagged bool) {
		for i, ref := range s.Images() {
			im := image.Summary{ID: id + string(rune('0'+i)), Labels: s.labels(imageSpecs[i].bin)}
			if tagged {
				im.RepoTags = []string{ref}
			}
			store.items = append(store.items, im)
		}
	}
	add(mine, "sha256:mine", true)
	add(mine, "sha256:mineold", false) // a dangling leftover of this run
	add(theirs, "sha256:theirs", true)
	add(theirs, "sha256:theirsbuilding", false) // the other run's untagged image, mid-build
	if err := mine.remove(context.Background(), store); err != nil {
		t.Fatal(err)
	}
	for _, im := range store.items {
		if strings.HasPrefix(im.ID, "sha256:mine") && len(im.RepoTags) > 0 || strings.HasPrefix(im.ID, "sha256:mineold") {
			t.Errorf("image %s %v of this run is left", im.ID, im.RepoTags)
		}
	}
	var left []string
	for _, im := range store.items {
		left = append(left, im.RepoTags...)
		if im.Labels[imageRunLabel] != theirs.Tag() && len(im.RepoTags) > 0 {
			t.Errorf("image %s %v of this run keeps its tags", im.ID, im.RepoTags)
		}
	}
	if want := theirs.Images(); !slices.Equal(left, want) {
		t.Errorf("tags left %v; want the other run's %v (removed: %v)", left, want, store.removed)
	}
	n := 0
	for _, im := range store.items {
		if strings.HasPrefix(im.ID, "sha256:theirs") {
			n++
		}
	}
	if n != 6 {
		t.Errorf("%d of the other run's 6 images are left (removed: %v)", n, store.removed)
	}
}

// Build refuses a reference that is not one of the set's images before it
// builds anything.
func TestBuildRefusesAnImageNotOfTheSet(t *testing.T) {
	s := NewImageSet()
	err := s.Build(context.Background(), nil, s.Mcplocal(), "mcpchaos/other:"+s.Tag())
	if err == nil || !strings.Contains(err.Error(), "want some of") {
		t.Errorf("an image not of the set: %v", err)
	}
}

// testcontainers' chatter goes to the writer given, one line each, or
// nowhere.
func TestQuietLoggerWritesLinesOrNothing(t *testing.T) {
	var b strings.Builder
	quietLogger{&b}.Printf("pulling %s\n", "x")
	quietLogger{nil}.Printf("dropped %s", "y")
	if b.String() != "testcontainers: pulling x\n" {
		t.Errorf("logged %q", b.String())
	}
}

// The module root is where go.mod is; outside a module there is none.
func TestModuleRootIsWhereGoModIs(t *testing.T) {
	ctx := context.Background()
	root, err := moduleRoot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Errorf("no go.mod in %s: %v", root, err)
	}
	t.Chdir(t.TempDir())
	t.Setenv("GO111MODULE", "")
	if _, err := moduleRoot(ctx); err == nil || !strings.Contains(err.Error(), "not inside the mcpchaos module") {
		t.Errorf("outside a module: %v", err)
	}
}
