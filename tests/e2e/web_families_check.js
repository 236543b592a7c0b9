/*
 * Headless Chromium check of the socket cards' throttle families, driven
 * by web_families.sh.  Env: PLAYWRIGHT_CORE, USER_DATA_DIR, UNCORED_URLS
 * ("MODEL=URL ...", each daemon simulating MODEL:dimm-hot-channel),
 * HOT_CHANNELS ("MODEL=CH ...", the hot channel where it is not 2),
 * PROCHOT_URLS ("MODEL=URL ...", daemons whose socket 1 alone has PROCHOT:
 * socket 1's card shows PROCHOT time, socket 0's does not),
 * UNMEASURED_URLS ("MODEL=URL ...", hosts no collector measures DRAM
 * throttling on: both cards say so),
 * AMD_URLS ("MODEL=URL ...", AMD EPYC daemons whose socket 1 has a DIMM at
 * 90 C on channel 3 slot 0 and PROCHOT: the cards have the same rows as
 * an Intel host's, socket 1's with its hot DIMM and PROCHOT time, and the
 * Intel-only rows say the CPU has no such register, never "no reading"),
 * SCREENSHOT and SCREENSHOT_MODEL (a picture of that model's page).  Per
 * model: socket 1's card says DRAM is throttling on its hot channel, socket 0's
 * that it is not, and "not measured" is said only of a family the socket's
 * snapshot has no field for.  Exits 0 when every check passes, 1 otherwise.
 */
'use strict';

const { run } = require('./web_browser.js');

function fail(msg) {
	throw new Error(msg);
}

/* How deep a family's field nests: 1 for {cause: x}, 2 with channels, 3 with slots or dies. */
function depth(v) {
	return v && typeof v === 'object' ? 1 + depth(Object.values(v)[0]) : 0;
}

const FIELDS = { 'dram-fraction': 'dram_throttled_seconds', 'prochot-fraction': 'prochot_seconds',
	'freq-fraction': 'frequency_limited_seconds', 'dimm-temp': 'dimm_temperature_celsius' };

/* Each card's family rows: "not measured" exactly where the socket's snapshot has no field. */
async function checkMeasured(page, model, url) {
	const snap = await (await page.request.get(url + '/api/v1/snapshot')).json();
	for (const sock of snap.sockets)
		for (const [cls, field] of Object.entries(FIELDS)) {
			const text = await page.textContent(`article.socket[data-socket="${sock.socket}"] .${cls}`);
			const measured = sock[field] !== undefined && sock[field] !== null;
			if (measured && /not measured/.test(text))
				fail(`${model}: socket ${sock.socket} says ${field} is not measured, the snapshot has it`);
			if (!measured && !/not measured/.test(text))
				fail(`${model}: socket ${sock.socket} ${field}: ${JSON.stringify(text)} without a field`);
		}
}

/* The channel the model's scenario heats: 2, or HOT_CHANNELS's. */
function hotChannel(model) {
	const pair = (process.env.HOT_CHANNELS || '').split(' ').find((p) => p.startsWith(model + '='));
	return pair ? pair.slice(model.length + 1) : '2';
}

async function checkModel(page, model, url) {
	const hot = hotChannel(model);
	await page.goto(url + '/', { timeout: 15000 });
	const card = (s) => `article.socket[data-socket="${s}"]`;
	/* The page may open in the scenario's cool part of the minute (40-60 s): wait more than a period. */
	await page.waitForFunction(() => {
		const st = (s) => {
			const e = document.querySelector(`article.socket[data-socket="${s}"] .dram-state`);
			return e ? e.getAttribute('data-state') : null;
		};
		return st(1) === 'throttling' && st(0) === 'ok';
	}, null, { timeout: 75000 }).catch(async () => {
		const t = await page.textContent('main').catch(() => '?');
		fail(`${model}: socket 1 not throttling or socket 0 not ok: ${t.slice(0, 600)}`);
	});
	const snap = await (await page.request.get(url + '/api/v1/snapshot')).json();
	/* The per-DIMM map marks socket 1's hot channel, nothing of socket 0. */
	if (await page.locator(`${card(1)} .dimm-map`).count() === 1) {
		const hot1 = await page.locator(`${card(1)} .dimm[data-hot="true"]`).evaluateAll(
			(cells) => cells.map((c) => c.getAttribute('data-channel')));
		if (hot1.length === 0 || hot1.some((ch) => ch !== hot))
			fail(`${model}: socket 1's map marks channels ${JSON.stringify(hot1)}, expected ${hot}`);
		if (await page.locator(`${card(0)} .dimm[data-hot="true"]`).count() !== 0)
			fail(`${model}: socket 0's map marks a hot DIMM`);
	} else if (depth(snap.sockets[1].dram_throttled_seconds) > 1) {
		fail(`${model}: socket 1 has channels but no DIMM map`);
	}
	/* Where the family has channels (not the Westmere uncore's socket-wide event), the card names it. */
	const want = depth(snap.sockets[1].dram_throttled_seconds) > 1 ?
		new RegExp(`% of time \\(.*channel ${hot}`) : /% of time/;
	const frac = await page.textContent(`${card(1)} .dram-fraction`);
	if (!want.test(frac) || /^0\.0 %/.test(frac))
		fail(`${model}: socket 1 DRAM throttled says ${JSON.stringify(frac)}, expected ${want}`);
	const frac0 = await page.textContent(`${card(0)} .dram-fraction`);
	if (/channel/.test(frac0))
		fail(`${model}: socket 0 DRAM throttled names a channel: ${JSON.stringify(frac0)}`);
	await checkMeasured(page, model, url);
}

/*
 * An AMD host: socket 1's DIMM row and map name its hot DIMM (channel 3,
 * slot 0, 90 C, twice the refresh rate), socket 0's none; PROCHOT time on
 * socket 1 alone; the temperature is Tctl; the rows of Intel registers
 * say this CPU has none; the DRAM throttled rows say not measured.
 */
async function checkAmd(page, model, url) {
	const card = (s) => `article.socket[data-socket="${s}"]`;
	await page.goto(url + '/', { timeout: 15000 });
	await page.waitForFunction(() => {
		const st = (s, cls) => {
			const e = document.querySelector(`article.socket[data-socket="${s}"] .${cls}`);
			return e ? e.getAttribute('data-state') : null;
		};
		return st(1, 'dimm-temp') === 'hot' && st(0, 'dimm-temp') === 'ok' &&
			st(1, 'prochot-fraction') === 'throttling' && st(0, 'prochot-fraction') === 'ok';
	}, null, { timeout: 20000 }).catch(async () => {
		const t = await page.textContent('main').catch(() => '?');
		fail(`${model}: socket 1's hot DIMM and PROCHOT not on its card alone: ${t.slice(0, 800)}`);
	});
	const dimm1 = await page.textContent(`${card(1)} .dimm-temp`);
	if (!/^90 °C, hottest \(channel 3, slot 0\); refresh 2× on channel 3 slot 0$/.test(dimm1))
		fail(`${model}: socket 1 DIMM temperature says ${JSON.stringify(dimm1)}`);
	const dimm0 = await page.textContent(`${card(0)} .dimm-temp`);
	if (!/refresh 1× on all$/.test(dimm0))
		fail(`${model}: socket 0 DIMM temperature says ${JSON.stringify(dimm0)}`);
	const hot1 = await page.locator(`${card(1)} .dimm[data-hot="true"]`).evaluateAll(
		(cells) => cells.map((c) => `${c.getAttribute('data-channel')}/${c.getAttribute('data-slot')}`));
	if (JSON.stringify(hot1) !== '["3/0"]')
		fail(`${model}: socket 1's DIMM map marks ${JSON.stringify(hot1)}, expected channel 3 slot 0`);
	if (await page.locator(`${card(0)} .dimm[data-hot="true"]`).count() !== 0)
		fail(`${model}: socket 0's DIMM map marks a hot DIMM`);
	for (const s of [0, 1]) {
		const text = await page.textContent(card(s));
		if (!/Temperature, now\d+ °C \(Tctl\) · no limit known/.test(text))
			fail(`${model}: socket ${s}'s temperature is not Tctl: ${text.slice(0, 400)}`);
		if (/no reading/.test(text))
			fail(`${model}: socket ${s} says "no reading" of a register AMD does not have: ${text.slice(0, 600)}`);
		for (const [cls, want] of [['package-state', 'not on this CPU'], ['prochot-state', 'no status bit on this CPU']]) {
			const t = await page.textContent(`${card(s)} .${cls}`);
			if (t !== want)
				fail(`${model}: socket ${s} .${cls} says ${JSON.stringify(t)}, expected ${JSON.stringify(want)}`);
		}
	}
	/* The throttling signals: PROCHOT (any) seen through hsmp, with socket 1's share above 0. */
	const seen = await page.textContent('#signals-seen li[data-signal="prochot/any"]').catch(() => null);
	if (seen !== 'PROCHOT (any): hsmp collector')
		fail(`${model}: PROCHOT (any) not among the signals seen: ${JSON.stringify(seen)}`);
	await page.waitForFunction(() => {
		const e = document.querySelector('#signal-values tr[data-signal="prochot/any"][data-socket="1"] td:last-child');
		return e && /% of time/.test(e.textContent) && !/^0\.0 %/.test(e.textContent);
	}, null, { timeout: 20000 }).catch(() => fail(`${model}: no PROCHOT (any) share on socket 1`));
	await checkMeasured(page, model, url);
}

/* PROCHOT on socket 1 only: socket 1's PROCHOT time is throttling, socket 0's ok. */
async function checkProchot(page, model, url) {
	await page.goto(url + '/', { timeout: 15000 });
	await page.waitForFunction(() => {
		const st = (s) => {
			const e = document.querySelector(`article.socket[data-socket="${s}"] .prochot-fraction`);
			return e ? e.getAttribute('data-state') : null;
		};
		return st(1) === 'throttling' && st(0) === 'ok';
	}, null, { timeout: 20000 }).catch(async () => {
		const t = await page.textContent('main').catch(() => '?');
		fail(`${model}: PROCHOT not on socket 1's card alone: ${t.slice(0, 600)}`);
	});
}

/* No collector measures DRAM throttling: every card says "not measured", none "throttling". */
async function checkUnmeasured(page, model, url) {
	await page.goto(url + '/', { timeout: 15000 });
	await page.waitForFunction(() => [0, 1].every((sock) => {
		const e = document.querySelector(`article.socket[data-socket="${sock}"] .dram-fraction`);
		return e && /not measured/.test(e.textContent);
	}), null, { timeout: 20000 }).catch(async () => {
		const t = await page.textContent('main').catch(() => '?');
		fail(`${model}: DRAM throttling not said to be unmeasured on both cards: ${t.slice(0, 600)}`);
	});
}

run({}, async (page, errors) => {
	for (const pair of (process.env.UNMEASURED_URLS || '').trim().split(/\s+/).filter(Boolean)) {
		const [model, url] = [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)];
		await checkUnmeasured(page, model, url);
		console.log(`${model} DRAM not measured: ok`);
	}
	for (const pair of (process.env.PROCHOT_URLS || '').trim().split(/\s+/).filter(Boolean)) {
		const [model, url] = [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)];
		await checkProchot(page, model, url);
		console.log(`${model} PROCHOT: ok`);
	}
	for (const pair of (process.env.AMD_URLS || '').trim().split(/\s+/).filter(Boolean)) {
		const [model, url] = [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)];
		await checkAmd(page, model, url);
		if (model === process.env.AMD_SCREENSHOT_MODEL && process.env.AMD_SCREENSHOT)
			await page.screenshot({ path: process.env.AMD_SCREENSHOT, fullPage: true });
		console.log(`${model} AMD: ok`);
	}
	for (const pair of process.env.UNCORED_URLS.trim().split(/\s+/)) {
		const [model, url] = [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)];
		await checkModel(page, model, url);
		if (model === process.env.SCREENSHOT_MODEL && process.env.SCREENSHOT)
			await page.screenshot({ path: process.env.SCREENSHOT });
		console.log(`${model}: ok`);
	}
	if (errors.length)
		fail('page errors: ' + errors.join('; '));
});
