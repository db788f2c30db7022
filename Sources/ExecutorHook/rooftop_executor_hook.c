#include "rooftop_executor_hook.h"

#include <stddef.h>

/// The Swift runtime's hook (swift/Runtime/Concurrency.h): a function pointer, null when unset.
extern void *swift_task_enqueueGlobal_hook;

bool rooftop_install_enqueue_global_hook(void *hook) {
    void *expected = NULL;
    return __atomic_compare_exchange_n(
        &swift_task_enqueueGlobal_hook, &expected, hook, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}
