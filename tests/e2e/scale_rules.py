#!/usr/bin/env python3
"""Write a copy of a Prometheus rules file with every duration divided by
one factor, so a test can run the shipped rules in seconds: each `for:`,
`keep_firing_for:`, and each range, subquery and offset inside the
expressions and the annotations' queries.  Heat shares (a rate over a
window, an average over a subquery) are then the same as at full scale when
the test scales its scrape and evaluation intervals and its scenarios'
periods by the same factor.  Fails when a duration is left unscaled or does
not divide into whole milliseconds.

Usage: scale_rules.py FACTOR IN OUT
"""
import re
import sys

import yaml

UNITS = {'ms': 1, 's': 1000, 'm': 60000, 'h': 3600000, 'd': 86400000, 'w': 604800000,
         'y': 31536000000}
ONE = r'\d+(?:ms|s|m|h|d|w|y)'
DURATION = re.compile(r'(?:%s)+' % ONE)   # 1m30s as well as 5m


def fail(msg):
    sys.exit('scale_rules.py: ' + msg)


def millis(text, where):
    total = 0
    for n, unit in re.findall(r'(\d+)(ms|s|m|h|d|w|y)', text):
        total += int(n) * UNITS[unit]
    if ''.join(re.findall(ONE, text)) != text:
        fail(f'{where}: {text!r} is not a duration')
    return total


def scaled(text, factor, where):
    ms = millis(text, where)
    if ms % factor:
        fail(f'{where}: {text} does not divide by {factor} into whole milliseconds')
    return f'{ms // factor}ms'


def scale_promql(expr, factor, where):
    """Ranges [d], subqueries [d:] and [d:r], and offsets."""
    def bracket(m):
        inner = m.group(1)
        parts = inner.split(':')
        if len(parts) > 2 or not all(p == '' or DURATION.fullmatch(p.strip()) for p in parts) \
                or not parts[0].strip():
            return m.group(0)  # not a range: an index such as printf's %[1]q
        return '[' + ':'.join(scaled(p.strip(), factor, where) if p.strip() else '' for p in parts) + ']'
    out = re.sub(r'\[([^\[\]]*)\]', bracket, expr)
    out = re.sub(r'\boffset\s+(-?)(%s)' % DURATION.pattern,
                 lambda m: 'offset ' + m.group(1) + scaled(m.group(2), factor, where), out)
    return out


def main():
    if len(sys.argv) != 4:
        fail('usage: scale_rules.py FACTOR IN OUT')
    factor = int(sys.argv[1])
    if factor < 1:
        fail('FACTOR must be a whole number of at least 1')
    doc = yaml.safe_load(open(sys.argv[2]))
    n = 0
    for group in doc['groups']:
        if 'interval' in group:
            group['interval'] = scaled(group['interval'], factor, group['name'])
        for rule in group['rules']:
            name = rule.get('alert') or rule.get('record')
            for key in ('for', 'keep_firing_for'):
                if key in rule:
                    rule[key] = scaled(str(rule[key]), factor, f'{name} {key}')
                    n += 1
            rule['expr'] = scale_promql(rule['expr'], factor, name)
            n += 1
            for key, text in (rule.get('annotations') or {}).items():
                rule['annotations'][key] = scale_promql(text, factor, f'{name} {key}')
            # Nothing that reads as a duration is left unscaled: every one
            # now ends in ms, as no duration of the input did.
            for key, text in [('expr', rule['expr'])] + [(k, str(rule.get(k, ''))) for k in ('for', 'keep_firing_for')] + \
                    list((rule.get('annotations') or {}).items()):
                for m in re.finditer(r'(?<![\w.:])(%s)(?![\w])' % DURATION.pattern, text):
                    if not m.group(1).endswith('ms') or re.search(r'\d(?:s|m|h|d|w|y)\d', m.group(1)):
                        fail(f'{name} {key}: the duration {m.group(1)} escaped the scaling')
    if n == 0:
        fail('no rules in ' + sys.argv[2])
    with open(sys.argv[3], 'w') as f:
        yaml.safe_dump(doc, f, sort_keys=False, allow_unicode=True, width=1000)


if __name__ == '__main__':
    main()
