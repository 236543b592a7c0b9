/*
 * The registers left unrestored, behind the engine seam: see engine.h.
 * They are the msr engine's (its ledger keeps them, ledger.h).
 */
#include "engine.h"
#include "ledger.h"
#include "state_file.h"

size_t engine_left_count(void)
{
	const struct ledger_record *v;

	return ledger_left(&v, NULL);
}

unsigned engine_finish_left(struct hw *hw, struct engine_left_result *ret)
{
	struct ledger_recovery rec = { 0 };

	ret->settled = ledger_finish_left(hw, &rec);
	ret->restored = rec.cleaned;
	ret->taken_over = rec.left;
	ret->remaining = engine_left_count();
	return ret->settled;
}
