// Processes cut short on purpose: killed at a random moment of their work, or as soon as the disk
// shows they reached a given step.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { cleanEnv, CLI } from './run.mjs';

/**
 * Runs a node script that prints "ready" once set up, and kills it with SIGKILL `delayMs` after that
 * (a crash at a random moment of its work). Resolves {pid, stdout, killed}; rejects when it fails by itself.
 */
export function runAndKill(script, args, delayMs) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timer;
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
    child.stdout.setEncoding('utf8').on('data', (d) => {
      stdout += d;
      if (!timer && stdout.startsWith('ready\n')) timer = setTimeout(() => child.kill('SIGKILL'), delayMs);
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (signal !== 'SIGKILL' && code !== 0)
        reject(new Error(`${path.basename(script)} ${args.join(' ')} failed (${code}): ${stderr}`));
      else resolve({ pid: child.pid, stdout, killed: signal === 'SIGKILL' });
    });
  });
}

/**
 * Runs the built CLI and sends it `signal` as soon as `ready()` holds (checked every millisecond or so,
 * for at most `timeoutMs`). Resolves {code, signal, stdout, stderr, sent, seen}: `sent` says whether the
 * signal went before the CLI ended, `seen` is what `ready()` returned then.
 */
export function killWhen(args, ready, signal, { timeoutMs = 60_000, env = cleanEnv() } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let sent = false;
    let seen;
    let ended = false;
    child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
    const deadline = Date.now() + timeoutMs;
    const poll = async () => {
      while (!ended && Date.now() < deadline) {
        seen = ready();
        if (seen) {
          sent = true;
          child.kill(signal);
          return;
        }
        // A timer, not a busy loop: the parent must leave the CPU to the child it watches.
        await delay(1);
      }
    };
    child.on('spawn', poll);
    child.on('error', reject);
    child.on('close', (code, sig) => {
      ended = true;
      resolve({ code, signal: sig, stdout, stderr, sent, seen });
    });
  });
}
