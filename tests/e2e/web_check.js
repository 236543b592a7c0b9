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
const { chromium } = require(process.env.PLAYWRIGHT_CORE);

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

	/* Two polls are needed before "throttling now" can be known. */
	await page.waitForFunction(() => {
		const st = (s) => {
			const e = document.querySelector(`article.socket[data-socket="${s}"] .dram-state`);
			return e ? e.getAttribute('data-state') : null;
		};
		return st(1) === 'throttling' && st(0) !== 'unknown' && st(0) !== null;
	}, null, { timeout: 20000 });
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
	await page.screenshot({ path: process.env.SCREENSHOT, fullPage: true });

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

async function main() {
	const context = await chromium.launchPersistentContext(process.env.USER_DATA_DIR, {
		executablePath: '/usr/bin/chromium',
		headless: true,
		timeout: 30000,
		viewport: { width: 1280, height: 900 },
		args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
			'--disable-background-networking', '--disable-component-update', '--disable-sync'],
	});
	const errors = [];
	let rc = 0;
	try {
		const page = context.pages()[0] || await context.newPage();
		page.on('pageerror', (e) => errors.push(String(e)));
		await check(page, errors);
		console.log('web page: ok');
	} catch (e) {
		console.error('FAIL: ' + e.message);
		rc = 1;
	} finally {
		await context.close();
	}
	process.exit(rc);
}

main().catch((e) => {
	console.error('FAIL: ' + (e && e.stack ? e.stack : e));
	process.exit(1);
});
