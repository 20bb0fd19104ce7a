package analysis

import (
	"time"

	"github.com/kwire/kwire/dissect"
)

type findEngine struct{ mem *budget }

func newFindEngine(mem *budget, slow time.Duration) *findEngine      { return &findEngine{mem: mem} }
func (f *findEngine) exchange(e *xinfo)                              {}
func (f *findEngine) event(ev *dissect.Event, file int, name string) {}
