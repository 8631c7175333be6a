// A slow-starting stdio server, deterministically: runs the command in
// argv[2..] but holds every line the client writes until it has sent both
// server/discover and initialize (the AI SDK's client sends initialize
// when discover has gone unanswered for a second), then passes them on in
// order. So the server reads discover, then initialize, on one pipe, as it
// does when a cold start keeps it from answering discover in time.
import { spawn } from 'node:child_process';
import readline from 'node:readline';

const child = spawn(process.argv[2], process.argv.slice(3), { stdio: ['pipe', 'inherit', 'inherit'] });
child.on('exit', (code) => process.exit(code ?? 1));
let held = [], seen = new Set();
readline.createInterface({ input: process.stdin }).on('line', (line) => {
  if (held === null) return child.stdin.write(line + '\n');
  held.push(line);
  try { seen.add(JSON.parse(line).method); } catch {}
  if (seen.has('server/discover') && seen.has('initialize')) {
    for (const l of held) child.stdin.write(l + '\n');
    held = null;
  }
}).on('close', () => child.stdin.end());
