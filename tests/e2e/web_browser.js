/*
 * Headless Chromium for the page checks (web_check.js, web_history_check.js,
 * web_families_check.js): Debian's /usr/bin/chromium through playwright-core
 * (PLAYWRIGHT_CORE), a profile in USER_DATA_DIR, no network of its own.
 */
'use strict';

const { chromium } = require(process.env.PLAYWRIGHT_CORE);

/*
 * Run body(page, errors) in a fresh browser (extra: more launch options,
 * a viewport or colour scheme), errors collecting the page's uncaught
 * errors; print "FAIL: why" and exit 1 when it throws, else exit 0.
 */
async function runInChromium(extra, body) {
	const context = await chromium.launchPersistentContext(process.env.USER_DATA_DIR, {
		executablePath: '/usr/bin/chromium',
		headless: true,
		timeout: 30000,
		viewport: { width: 1280, height: 900 },
		...extra,
		args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
			'--disable-background-networking', '--disable-component-update', '--disable-sync'],
	});
	const errors = [];
	let rc = 0;
	try {
		const page = context.pages()[0] || await context.newPage();
		page.on('pageerror', (e) => errors.push(String(e)));
		await body(page, errors);
	} catch (e) {
		console.error('FAIL: ' + e.message);
		for (const err of errors)
			console.error('page error: ' + err);
		rc = 1;
	} finally {
		await context.close();
	}
	process.exit(rc);
}

function run(extra, body) {
	runInChromium(extra, body).catch((e) => {
		console.error('FAIL: ' + (e && e.stack ? e.stack : e));
		process.exit(1);
	});
}

module.exports = { run };
