#ifndef ROOFTOP_EXECUTOR_HOOK_H
#define ROOFTOP_EXECUTOR_HOOK_H

#include <stdbool.h>

/// Sets the Swift runtime's hook for jobs queued on the global executor
/// (`swift_task_enqueueGlobal_hook`) to `hook`, when no hook is set yet (atomically).
/// Returns whether it was set.
///
/// The hook is named here rather than looked up with `dlsym` (as NIO does): a program linked
/// with the Swift runtime statically keeps the symbol out of its dynamic table.
bool rooftop_install_enqueue_global_hook(void *hook);

#endif
