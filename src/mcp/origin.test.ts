// DNS-rebinding rule of the MCP endpoint: which browser Origins may drive it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { originAllowed } from './routes.ts';

test('own origin, configured CORS origins, and loopback pages on a loopback server only', () => {
  assert.ok(originAllowed('https://atrium.example.com', 'https://atrium.example.com', []));
  assert.ok(originAllowed('https://app.example.com', 'https://atrium.example.com', ['https://app.example.com']));
  assert.ok(!originAllowed('https://evil.example.com', 'https://atrium.example.com', []));
  assert.ok(originAllowed('http://localhost:3000', 'http://127.0.0.1:8080', []));
  assert.ok(!originAllowed('http://localhost:3000', 'https://atrium.example.com', []), 'a loopback page may not drive a public server');
  assert.ok(!originAllowed('http://evil.example.com', 'http://127.0.0.1:8080', []));
  assert.ok(!originAllowed('null', 'http://127.0.0.1:8080', []));
});
