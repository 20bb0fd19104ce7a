package pipeline

import (
	"bufio"
	"bytes"
	"errors"
)

// Output is a worker's rendered output: chunks from free lists, so that the text
// of a large exchange (megabytes for a Produce of a thousand records)
// costs neither the doublings of one growing buffer nor fresh memory each
// time, and the line of a Heartbeat costs a small chunk, not a large one.
//
// With mem, every chunk is reserved from the job's memory first; once a
// reservation is refused the buffer takes nothing more and its Write
// fails with ErrOverBudget (the rendering is then done again at the head,
// straight to the output).
type Output struct {
	chunks [][]byte // full chunks
	cur    []byte
	size   int // bytes in the full chunks
	mem    *JobMem
	taken  int64 // bytes reserved for the chunks
	err    error
}

// ErrOverBudget stops a rendering the flight's memory has no room for.
var ErrOverBudget = errors.New("rendering refused memory: to be done again at the head")

// Output chunks come in size classes: an exchange's first chunk is the
// smallest (one line, or the tree of a small exchange, fits), its second
// the next, its third and later the largest (larger than the output's
// 64 KiB buffer, so that bufio writes them directly rather than copying
// them). Each class's free list keeps keep chunks between exchanges (at
// most 5.5 MiB in all); free lists rather than a sync.Pool, which every
// garbage collection empties.
var chunkClasses = [...]struct{ size, keep int }{
	{2 << 10, 256},
	{16 << 10, 64},
	{128 << 10, 32},
}

var freeChunks = func() (f [len(chunkClasses)]chan []byte) {
	for i, c := range chunkClasses {
		f[i] = make(chan []byte, c.keep)
	}
	return f
}()

// getChunk returns an empty chunk of class c.
func getChunk(c int) []byte {
	select {
	case b := <-freeChunks[c]:
		return b
	default:
		return make([]byte, 0, chunkClasses[c].size)
	}
}

// putChunk hands a chunk back to its class's free list.
func putChunk(b []byte) {
	for c := len(chunkClasses) - 1; c >= 0; c-- {
		if cap(b) == chunkClasses[c].size {
			select {
			case freeChunks[c] <- b[:0]:
			default:
			}
			return
		}
	}
}

// JSON lines are built whole (render.AppendExchangeJSON appends to one
// buffer); a line's buffer starts at the class its frames suggest and
// grows as append grows it. The free lists keep buffers of at least each
// class's size: many small ones, a few of the largest, none over lineMax
// bytes (the line of a Produce of a thousand 1 KB records is about 600 KB).
// LineGuess is what a line's memory is guessed at before it is built
// (beside its trees'), with --max-decode-memory.
var lineClasses = [...]struct{ size, keep int }{
	{4 << 10, 256},
	{64 << 10, 16},
	{1 << 20, 4},
}

const (
	lineMax   = 4 << 20
	LineGuess = 128 << 10
)

var freeLines = func() (f [len(lineClasses)]chan []byte) {
	for i, c := range lineClasses {
		f[i] = make(chan []byte, c.keep)
	}
	return f
}()

// GetLine returns an empty buffer for a JSON line of about hint bytes:
// one of at least hint bytes when hint is past the largest class (a line
// grown by append from the class's size would be copied three or four
// times on the way).
func GetLine(hint int64) []byte {
	c := 0
	for c < len(lineClasses)-1 && int64(lineClasses[c].size) < hint {
		c++
	}
	select {
	case b := <-freeLines[c]:
		if int64(cap(b)) >= hint || hint > lineMax {
			return b
		}
		PutLine(b) // too small for this one; kept for the next
	default:
	}
	return make([]byte, 0, max(int64(lineClasses[c].size), min(hint, lineMax)))
}

// PutLine hands a line's buffer back to the largest class it can serve.
func PutLine(b []byte) {
	if cap(b) > lineMax {
		return
	}
	for c := len(lineClasses) - 1; c >= 0; c-- {
		if cap(b) >= lineClasses[c].size {
			select {
			case freeLines[c] <- b[:0]:
			default:
			}
			return
		}
	}
}

// Write implements io.Writer; it fails with ErrOverBudget once the
// job's memory refused a chunk.
func (c *Output) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if len(c.cur) == cap(c.cur) {
			c.next()
		}
		if c.err != nil {
			return 0, c.err
		}
		k := copy(c.cur[len(c.cur):cap(c.cur)], p)
		c.cur = c.cur[:len(c.cur)+k]
		p = p[k:]
	}
	return n, nil
}

// WritePrefixed writes p with prefix before every line that is not
// empty, as an indenting writer does; bol says whether p starts a line, and the
// result whether the next write does.
func (c *Output) WritePrefixed(p []byte, prefix string, bol bool) bool {
	for len(p) > 0 {
		if bol && p[0] != '\n' {
			c.WriteString(prefix)
		}
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			c.Write(p)
			return false
		}
		c.Write(p[:i+1])
		bol = true
		p = p[i+1:]
	}
	return bol
}

// WriteString writes s (io.StringWriter, its error left to Write's).
func (c *Output) WriteString(s string) {
	if c.err != nil {
		return
	}
	if cap(c.cur)-len(c.cur) < len(s) {
		c.Write([]byte(s))
		return
	}
	c.cur = append(c.cur, s...)
}

// WriteByte implements io.ByteWriter.
func (c *Output) WriteByte(b byte) error {
	if len(c.cur) == cap(c.cur) {
		c.next()
	}
	if c.err != nil {
		return c.err
	}
	c.cur = append(c.cur, b)
	return nil
}

func (c *Output) next() {
	if c.err != nil {
		return
	}
	class := 0 // the first chunk's
	if c.cur != nil {
		class = min(len(c.chunks)+1, len(chunkClasses)-1)
	}
	if c.mem != nil {
		size := int64(chunkClasses[class].size)
		if !c.mem.Reserve(size) {
			c.err = ErrOverBudget
			return
		}
		c.taken += size
	}
	if c.cur != nil {
		c.chunks = append(c.chunks, c.cur)
		c.size += len(c.cur)
	}
	c.cur = getChunk(class)
}

// Discard hands the chunks back unwritten, and their memory.
func (c *Output) Discard() {
	for _, b := range c.chunks {
		putChunk(b)
	}
	if c.cur != nil {
		putChunk(c.cur)
	}
	c.reset()
}

// reset empties c once its chunks are handed back, keeping its memory
// account and its list of chunks for the next use.
func (c *Output) reset() {
	if c.mem != nil && c.taken > 0 {
		c.mem.Reserve(-c.taken)
	}
	clear(c.chunks)
	*c = Output{mem: c.mem, chunks: c.chunks[:0]}
}

// WriteTo writes the chunks to w and hands them back to the free list.
// Full chunks go to w's writer directly, not copied through its buffer.
func (c *Output) WriteTo(w *bufio.Writer) error {
	var err error
	if c.size+len(c.cur) >= w.Size() {
		err = w.Flush()
	}
	for _, b := range c.chunks {
		if err == nil && len(b) > 0 {
			_, err = w.Write(b)
		}
		putChunk(b)
	}
	if b := c.cur; b != nil {
		if err == nil && len(b) > 0 {
			_, err = w.Write(b)
		}
		putChunk(b)
	}
	c.reset()
	return err
}

// SetMemory makes the output reserve its chunks from m (nil: not
// bounded); call it before the first write.
func (c *Output) SetMemory(m *JobMem) { c.mem = m }
