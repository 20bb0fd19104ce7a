package analysis

type txnTracker struct{ mem *budget }

func newTxnTracker(mem *budget) *txnTracker { return &txnTracker{mem: mem} }
func (t *txnTracker) exchange(e *xinfo)     {}
