// XmlMap's parser and XPath subset without a server: namespaces by URI, predicates, attributes, text(),
// entities left unexpanded, and what is refused before parsing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import '../engine.ts';

const { parseXml, xpathText, MAX_DEPTH } = await import('./xml.ts');

const doc = parseXml(`<?xml version="1.0"?>
<inv:Invoice xmlns:inv="urn:inv" xmlns:x="urn:basic">
  <x:ID>A-1</x:ID>
  <inv:Lines>
    <inv:Line no="1"><x:Amount currency="EUR">10.50</x:Amount></inv:Line>
    <inv:Line no="2"><x:Amount currency="USD">7</x:Amount><!-- a comment --></inv:Line>
  </inv:Lines>
  <note>Fish &amp; chips &lt;3 &#169; &#x41; &custom;</note>
  <raw><![CDATA[<not-a-tag> & stays]]></raw>
</inv:Invoice>`);
const ns = { cbc: 'urn:basic', ubl: 'urn:inv' };

test('absolute paths from the document, or from the root element as the platform examples read them', () => {
  assert.equal(xpathText(doc, '/ubl:Invoice/cbc:ID', ns), 'A-1');
  assert.equal(xpathText(doc, '/cbc:ID', ns), 'A-1');
  assert.equal(xpathText(doc, '/nothing/here', ns), null);
});

test('prefixes resolve by namespace URI; unprefixed names match the local name; a prefix not given is compared as written', () => {
  assert.equal(xpathText(doc, '/ubl:Lines/ubl:Line/cbc:Amount', ns), '10.50');
  assert.equal(xpathText(doc, '/Lines/Line[2]/Amount', {}), '7');
  assert.equal(xpathText(doc, '/inv:Lines/inv:Line/x:Amount', {}), '10.50');
  assert.equal(xpathText(doc, '/inv:Lines/inv:Line/x:Amount', { x: 'urn:other' }), null);
});

test('//, [n], [last()], [@a=v], @attr and text()', () => {
  assert.equal(xpathText(doc, '//cbc:Amount[last()]', ns), '7');
  assert.equal(xpathText(doc, "//ubl:Line[@no='2']/cbc:Amount/@currency", ns), 'USD');
  assert.equal(xpathText(doc, '//ubl:Line/@no', ns), '1');
  assert.equal(xpathText(doc, '/note/text()', ns), 'Fish & chips <3 © A &custom;');
  assert.equal(xpathText(doc, '/raw', ns), '<not-a-tag> & stays');
  assert.throws(() => xpathText(doc, '/a[position()>1]', ns), /predicate/);
});

test('entity declarations, external DTDs, deep nesting and malformed XML are refused', () => {
  assert.throws(() => parseXml('<!DOCTYPE a [<!ENTITY e "x">]><a>&e;</a>'), /declares entities/);
  assert.throws(() => parseXml('<!DOCTYPE a PUBLIC "-//X//EN" "http://example.com/a.dtd"><a/>'), /external DTD/);
  assert.equal(xpathText(parseXml('<!DOCTYPE a><a>ok</a>'), '/a', {}), 'ok');
  assert.throws(() => parseXml(`${'<a>'.repeat(MAX_DEPTH + 1)}${'</a>'.repeat(MAX_DEPTH + 1)}`), /more than 64 deep/);
  assert.doesNotThrow(() => parseXml(`${'<a>'.repeat(MAX_DEPTH)}${'</a>'.repeat(MAX_DEPTH)}`));
  assert.doesNotThrow(() => parseXml(`<r>${'<a x=">" y="/>"/>'.repeat(1000)}</r>`), 'self-closing tags with > in attributes do not count as nesting');
  assert.throws(() => parseXml('<a><b></a>'), /not well-formed/);
});
