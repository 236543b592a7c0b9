/*
 * Headless Chromium check of the uncored web page, driven by web.sh.
 *
 * Env: PLAYWRIGHT_CORE (module dir), UNCORED_URL, USER_DATA_DIR, SCREENSHOT,
 * SCREENSHOT_DOWN, STOP_REQUEST and STOPPED (handshake files: this script
 * writes STOP_REQUEST and waits for web.sh to stop the daemon and write
 * STOPPED), EXPECT_CORES.  Exits 0 when every check passes, 1 otherwise.
 */
'use strict';

const fs = require('fs');
const { run } = require('./web_browser.js');

const url = process.env.UNCORED_URL;
const expectCores = Number(process.env.EXPECT_CORES || 12);

function fail(msg) {
	throw new Error(msg);
}

async function waitForFile(path, ms) {
	const until = Date.now() + ms;
	while (!fs.existsSync(path)) {
		if (Date.now() > until)
			fail(`${path} did not appear within ${ms} ms`);
		await new Promise((r) => setTimeout(r, 100));
	}
}

async function socketState(page, socket) {
	return page.getAttribute(`article.socket[data-socket="${socket}"] .dram-state`, 'data-state');
}

async function check(page, errors) {
	await page.goto(url + '/', { timeout: 15000 });
	const title = await page.title();
	if (!title.includes('uncored'))
		fail(`page title is ${JSON.stringify(title)}`);

	await page.waitForSelector('.core-cell', { timeout: 15000 });
	const cells = await page.locator('.core-cell').count();
	if (cells !== expectCores)
		fail(`grid has ${cells} core cells, expected ${expectCores}`);
	for (const s of [0, 1]) {
		const n = await page.locator(`article.socket[data-socket="${s}"] .core-cell`).count();
		if (n !== expectCores / 2)
			fail(`socket ${s} has ${n} core cells, expected ${expectCores / 2}`);
	}

	/*
	 * Two polls are needed before "throttling now" can be known, and the page
	 * may open in the scenario's cool part of the minute (35-60 s): wait more
	 * than a whole period for the heat.
	 */
	await page.waitForFunction(() => {
		const st = (s) => {
			const e = document.querySelector(`article.socket[data-socket="${s}"] .dram-state`);
			return e ? e.getAttribute('data-state') : null;
		};
		return st(1) === 'throttling' && st(0) !== 'unknown' && st(0) !== null;
	}, null, { timeout: 75000 });
	const s0 = await socketState(page, 0);
	if (s0 !== 'ok')
		fail(`socket 0 DRAM state is ${s0}, expected ok`);
	const s1text = await page.textContent('article.socket[data-socket="1"] .dram-state');
	if (!/throttling now/.test(s1text))
		fail(`socket 1 DRAM text is ${JSON.stringify(s1text)}`);
	const frac = await page.textContent('article.socket[data-socket="1"] .dram-fraction');
	if (!/% of time/.test(frac))
		fail(`socket 1 DRAM fraction is ${JSON.stringify(frac)}`);
	/* Westmere-EP has no IA32_PACKAGE_THERM_STATUS: said so, not "no reading". */
	for (const s of [0, 1]) {
		const pkg = await page.textContent(`article.socket[data-socket="${s}"] .package-state`);
		if (pkg !== 'not on this CPU')
			fail(`socket ${s} package throttling reads ${JSON.stringify(pkg)}, expected "not on this CPU"`);
	}
	const collectors = await page.locator('#collectors tr').count();
	if (collectors < 1)
		fail('no collector rows');
	if (!(await page.isHidden('#banner')))
		fail('the not-answering banner shows while the daemon answers');
	await checkSignals(page);
	await page.screenshot({ path: process.env.SCREENSHOT, fullPage: true });
	await checkSignalValues(page.context());

	fs.writeFileSync(process.env.STOP_REQUEST, 'stop\n');
	await waitForFile(process.env.STOPPED, 20000);
	await page.waitForSelector('#banner:not([hidden])', { timeout: 15000 });
	const banner = await page.textContent('#banner');
	if (!/^daemon not answering since \d\d:\d\d:\d\d/.test(banner))
		fail(`banner says ${JSON.stringify(banner)}`);
	await page.screenshot({ path: process.env.SCREENSHOT_DOWN, fullPage: true });

	/* Fetch failures after the stop are expected; anything else is a bug. */
	if (errors.length)
		fail('page errors: ' + errors.join('; '));
}

/* Westmere-EP: DRAM thermal throttling is seen through the uncore collector, nothing else. */
async function checkSignals(page) {
	const seen = await page.textContent('#signals-seen li[data-signal="dram_throttled/thermal"]');
	if (seen !== 'DRAM throttled (thermal): uncore collector')
		fail(`seen signal says ${JSON.stringify(seen)}`);
	if ((await page.locator('#signals-seen li').count()) !== 1)
		fail('more than one signal seen on Westmere-EP');
	if (await page.isHidden('#signals-unseen-box'))
		fail('the signals not measured here are hidden');
	const unseen = await page.textContent('#signals-unseen li[data-signal="prochot/external"]');
	if (unseen !== 'PROCHOT (external): no collector measures it on this CPU (westmere-ep)')
		fail(`unseen signal says ${JSON.stringify(unseen)}`);
	/*
	 * The uncore collector's DRAM family is in each socket's object
	 * ("dram_throttled_seconds": {"thermal": seconds}): one value row per
	 * socket, and none for the signals not seen.
	 */
	await page.waitForSelector('#signal-values tr[data-signal="dram_throttled/thermal"][data-socket="1"]',
		{ timeout: 15000 });
	if ((await page.locator('#signal-values tr[data-signal="dram_throttled/thermal"]').count()) !== 2)
		fail('not one DRAM throttled (thermal) row per socket');
	if ((await page.locator('#signal-values tbody tr').count()) !== 2)
		fail('value rows for signals this host does not see');
}

/*
 * A snapshot that carries a seen signal's family (as a PCU collector's
 * would): the page shows its share of time per socket, and only there.
 */
async function checkSignalValues(context) {
	const page = await context.newPage();
	await page.route('**/api/v1/snapshot', async (route) => {
		const r = await route.fetch();
		const s = await r.json();
		for (const sig of s.throttling_signals)
			if (sig.signal === 'prochot' && sig.source === 'external')
				Object.assign(sig, { visible: true, collector: 'pcu', why_not: null });
		for (const sock of s.sockets)
			sock.prochot_seconds = { external: sock.socket === 1 ? s.time / 4 : 0, internal: s.time };
		await route.fulfill({ response: r, json: s });
	});
	await page.goto(url + '/', { timeout: 15000 });
	const row = '#signal-values tr[data-signal="prochot/external"]';
	await page.waitForFunction((sel) => {
		const e = document.querySelector(`${sel}[data-socket="1"] td:last-child`);
		return e && /% of time/.test(e.textContent);
	}, row, { timeout: 20000 });
	const s1 = await page.textContent(`${row}[data-socket="1"] td:last-child`);
	const s0 = await page.textContent(`${row}[data-socket="0"] td:last-child`);
	if (s1 !== '25.0 % of time' || s0 !== '0.0 % of time')
		fail(`PROCHOT external shares: socket 0 ${JSON.stringify(s0)}, socket 1 ${JSON.stringify(s1)}`);
	/* Internal is in the snapshot but not seen: not shown. */
	if ((await page.locator('#signal-values tr[data-signal="prochot/internal"]').count()) !== 0)
		fail('a signal the host does not see has value rows');
	await page.close();

	/* A host that sees none (a later Xeon without the pcu/imc collectors, a VM): it says so. */
	const none = await context.newPage();
	await none.route('**/api/v1/snapshot', async (route) => {
		const r = await route.fetch();
		const s = await r.json();
		for (const sig of s.throttling_signals)
			Object.assign(sig, { visible: false, collector: null,
				why_not: 'no collector measures it on this CPU (skylake-sp)' });
		await route.fulfill({ response: r, json: s });
	});
	await none.goto(url + '/', { timeout: 15000 });
	await none.waitForSelector('#signals-none:not([hidden])', { timeout: 15000 });
	if ((await none.locator('#signals-seen li').count()) !== 0)
		fail('signals listed as seen on a host that sees none');
	if ((await none.locator('#signals-unseen li').count()) !== 8)
		fail('not every unseen signal is listed');
	await none.close();
}

run({}, async (page, errors) => {
	await check(page, errors);
	console.log('web page: ok');
});
