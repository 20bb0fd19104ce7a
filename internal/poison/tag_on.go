//go:build kwirepoison

package poison

const tagged = true
