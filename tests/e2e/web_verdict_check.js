/*
 * Headless Chromium check of the page's verdict, its last-hour rows and
 * DIMM map, Genoa's CCD grid, the PROCHOT row and the core badges; driven
 * by web_verdict.sh, which says what each daemon runs.
 *
 * Env: PLAYWRIGHT_CORE, USER_DATA_DIR, ARTIFACTS (screenshots),
 * RUNS ("MODEL=CHANNEL=URL=T0 ...": CHANNEL the one the verdict names, "-"
 * for none; T0 the wall time the daemon answered, after the scenario's
 * time 0), STORM_URL (granite-rapids-2s:prochot-storm), IDLE_URL
 * (sapphire-rapids-2s:idle).  Every wait is on the page's or the API's
 * state, with a deadline.  Exits 0 when every check passes.
 */
'use strict';

const { run } = require('./web_browser.js');

const HEAT_END = 9;          /* the scenarios' heat ends 9 s into their period */

function fail(msg) {
	throw new Error(msg);
}

async function main(page) {
	return page.evaluate(() => document.querySelector('main').innerText.slice(0, 1500)).catch(() => '?');
}

/* Wait until pred (run in the page, with arg) holds, or fail with what the page shows. */
async function waitPage(page, what, pred, arg, ms) {
	await page.waitForFunction(pred, arg, { timeout: ms, polling: 100 }).catch(async () => {
		const v = await page.textContent('#verdict').catch(() => '?');
		fail(`${what} within ${ms / 1000} s; verdict ${JSON.stringify(v)}; page: ${await main(page)}`);
	});
}

function verdictNames(model, channel) {
	const where = channel === '-' ? 'Socket 1: ' : model.startsWith('genoa') ?
		`Socket 1, channel ${channel} slot 0: ` : `Socket 1, channel ${channel}`;
	return where;
}

/* No card says "not asserted" while its PROCHOT row, or any of its rows, shows a PROCHOT share above zero. */
async function checkProchotRows(page, model) {
	const bad = await page.evaluate(() => {
		const out = [];
		for (const card of document.querySelectorAll('article.socket')) {
			const row = card.querySelector('.prochot-row');
			const text = row ? row.textContent : '';
			const shares = [...text.matchAll(/(\d+(?:\.\d+)?) %/g)].map((m) => Number(m[1]));
			if (shares.some((x) => x > 0) && /not asserted/.test(card.textContent))
				out.push(`socket ${card.getAttribute('data-socket')}: ${text}`);
		}
		return out;
	});
	if (bad.length)
		fail(`${model}: "not asserted" beside a PROCHOT share above zero: ${bad.join('; ')}`);
}

/* Socket 1's map marks where the heat was (channel, and for Genoa slot 0) and socket 0's nothing. */
async function checkMap(page, model, channel) {
	const marks = await page.evaluate(() => [...document.querySelectorAll('article.socket .dimm[data-was="true"]')]
		.map((c) => ({ socket: c.closest('article').getAttribute('data-socket'), channel: c.getAttribute('data-channel'),
			slot: c.getAttribute('data-slot') })));
	if (channel === '-') {
		if (await page.locator('.dimm-map').count() !== 0)
			fail(`${model}: a DIMM map on hardware without channels`);
		return;
	}
	const s1 = marks.filter((m) => m.socket === '1');
	if (s1.length === 0 || s1.some((m) => m.channel !== channel))
		fail(`${model}: socket 1's map marks ${JSON.stringify(s1)} as having been hot, expected channel ${channel}`);
	if (model.startsWith('genoa') && s1.some((m) => m.slot !== '0'))
		fail(`${model}: socket 1's map marks ${JSON.stringify(s1)}, expected slot 0 only`);
	if (marks.some((m) => m.socket !== '1'))
		fail(`${model}: another socket's map marks a DIMM: ${JSON.stringify(marks)}`);
}

async function history(page, url) {
	return (await page.request.get(url + '/api/v1/history')).json();
}

/* Wait until the history has a point whose step began after the heat ended. */
async function waitHeatOver(page, model, url, t0) {
	const until = Date.now() + 60000;
	for (;;) {
		const doc = await history(page, url);
		const t = doc.sockets[1].time;
		if (t.length && t[t.length - 1] - doc.step_seconds > t0 + HEAT_END + 1)
			return;
		if (Date.now() > until)
			fail(`${model}: the history has no step after the heat within 60 s`);
		await new Promise((r) => setTimeout(r, 200));
	}
}

async function checkRun(page, spec) {
	const [model, channel, url, t0s] = spec.split('=');
	const t0 = Number(t0s);
	const names = verdictNames(model, channel);
	/* While hot (or, on a slow machine, just after): the verdict names socket 1 and where. */
	await page.goto(url + '/', { timeout: 15000 });
	await waitPage(page, `${model}: no verdict naming ${JSON.stringify(names)}`,
		(n) => document.getElementById('verdict').textContent.startsWith(n), names, 20000);
	await checkProchotRows(page, model);
	if (model.startsWith('genoa')) {
		for (const s of ['0', '1']) {
			const ccds = await page.evaluate((sock) => [...document.querySelectorAll(
				`article.socket[data-socket="${sock}"] .ccd-cell`)].map((c) =>
				`${c.querySelector('.core-id').textContent}=${c.querySelector('.core-temp').textContent}`), s);
			if (ccds.length !== 12 || !ccds.every((t, i) => new RegExp(`^CCD ${i + 1}=\\d+(\\.\\d+)?°$`).test(t)))
				fail(`${model}: socket ${s}'s grid shows ${JSON.stringify(ccds)}, expected 12 CCD temperatures`);
		}
		const temp = await page.textContent('article.socket[data-socket="1"] .temp-fact');
		if (!/°C \(Tctl\) · no limit known/.test(temp))
			fail(`${model}: Tctl row says ${JSON.stringify(temp)}`);
	}

	/* After the heat: a page opened now still says where it was, over the last hour, and not now. */
	await waitHeatOver(page, model, url, t0);
	const fresh = await page.context().newPage();
	try {
		await fresh.goto(url + '/', { timeout: 15000 });
		await waitPage(fresh, `${model}: after the heat, no verdict naming ${JSON.stringify(names)} over the last hour`,
			(n) => {
				const v = document.getElementById('verdict');
				return v.textContent.startsWith(n) && / of the last /.test(v.textContent) &&
					v.getAttribute('data-state') === 'was' && document.querySelector('.dimm[data-was="true"], .verdict');
			}, names, 20000);
		/* The map comes with the history: wait for it where the hardware has one. */
		if (channel !== '-')
			await waitPage(fresh, `${model}: no DIMM of socket 1 marked as having been hot`,
				() => document.querySelector('article.socket[data-socket="1"] .dimm[data-was="true"]') !== null, null, 20000);
		await checkMap(fresh, model, channel);
		await checkProchotRows(fresh, model);
		const row = await fresh.textContent('article.socket[data-socket="1"]');
		if (!/ of the last /.test(row))
			fail(`${model}: socket 1's card has no figure over the last hour: ${row.slice(0, 600)}`);
		await fresh.screenshot({ path: `${process.env.ARTIFACTS}/web-verdict-${model}.png`, fullPage: true });
	} finally {
		await fresh.close();
	}
	console.log(`${model}: verdict, last hour and map ok`);
}

/* Badges beside, never over, a core's number and temperature: element boxes, on every marked tile. */
async function checkBadges(page) {
	await page.goto(process.env.STORM_URL + '/', { timeout: 15000 });
	await waitPage(page, 'prochot-storm: no T or P badge', () => document.querySelectorAll('.core-cell .mark').length >= 2,
		null, 45000);
	const overlaps = await page.evaluate(() => {
		const out = [];
		const cut = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
		for (const cell of document.querySelectorAll('.core-cell')) {
			const marks = [...cell.querySelectorAll('.mark')];
			if (!marks.length)
				continue;
			const id = cell.querySelector('.core-id').getBoundingClientRect();
			const temp = cell.querySelector('.core-temp').getBoundingClientRect();
			const box = cell.getBoundingClientRect();
			for (const m of marks) {
				const r = m.getBoundingClientRect();
				if (cut(r, id) || cut(r, temp) || r.right > box.right + 0.5 || r.bottom > box.bottom + 0.5)
					out.push(`core ${cell.getAttribute('data-core')} ${m.textContent}: badge ${JSON.stringify(r)}, ` +
						`number ${JSON.stringify(id)}, temperature ${JSON.stringify(temp)}`);
			}
		}
		return out;
	});
	if (overlaps.length)
		fail('badges overlap: ' + overlaps.join('; '));
	/* Core names are whole ("core 31", not "cor"): the text fits its box. */
	const cut = await page.evaluate(() => [...document.querySelectorAll('.core-cell .core-id')]
		.filter((e) => e.scrollWidth > e.clientWidth + 1 || e.getBoundingClientRect().right >
			e.closest('.core-cell').getBoundingClientRect().right).map((e) => e.textContent));
	if (cut.length)
		fail('core numbers cut: ' + cut.join(', '));
	/* The storm's PROCHOT: a share above zero on socket 0, and no "not asserted" beside it, poll after poll. */
	await waitPage(page, 'prochot-storm: no PROCHOT share above zero on socket 0', () => {
		const r = document.querySelector('article.socket[data-socket="0"] .prochot-row');
		return r && [...r.textContent.matchAll(/(\d+(?:\.\d+)?) %/g)].some((m) => Number(m[1]) > 0);
	}, null, 45000);
	for (let i = 0; i < 8; i++) {
		const was = await page.textContent('#updated');
		await checkProchotRows(page, 'granite-rapids-2s:prochot-storm');
		await waitPage(page, 'prochot-storm: no new sample', (w) => document.getElementById('updated').textContent !== w,
			was, 10000);
	}
	console.log('granite-rapids-2s:prochot-storm: badges and PROCHOT rows ok');
}

async function checkIdle(page) {
	await page.goto(process.env.IDLE_URL + '/', { timeout: 15000 });
	await waitPage(page, 'sapphire-rapids-2s:idle: no "No heat in the last …"',
		() => /^No heat in the last /.test(document.getElementById('verdict').textContent), null, 30000);
	console.log('sapphire-rapids-2s:idle: no heat ok');
}

run({ viewport: { width: 1280, height: 1000 } }, async (page, errors) => {
	for (const spec of process.env.RUNS.trim().split(/\s+/))
		await checkRun(page, spec);
	await checkBadges(page);
	await checkIdle(page);
	if (errors.length)
		fail('page errors: ' + errors.join('; '));
});
