// A Git repository on local disk that Argo CD's repo server reads through a
// file:// URL, as Argo CD's own end-to-end tests do: a bare repository and a
// work tree that commits and pushes to it.
import { execFile } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Identity and settings for every git call, so nothing depends on the machine's git config. */
const gitConfig = [
  '-c',
  'user.name=Skylift tests',
  '-c',
  'user.email=tests@skylift.invalid',
  '-c',
  'commit.gpgsign=false',
  '-c',
  'init.defaultBranch=main',
];

/** A bare repository at `<dir>/repo.git` with one branch, `main`, and a work tree to commit from. */
export class LocalGitRepo {
  /** `file:///…/repo.git`, what an Application's `spec.source.repoURL` names. */
  readonly url: string;
  private readonly work: string;

  private constructor(url: string, work: string) {
    this.url = url;
    this.work = work;
  }

  /** Creates the bare repository and its work tree under `dir` (which must not hold them yet). */
  static async create(dir: string): Promise<LocalGitRepo> {
    const bare = join(dir, 'repo.git');
    const work = join(dir, 'work');
    await mkdir(dir, { recursive: true });
    await git(dir, ['init', '--quiet', '--bare', bare]);
    await git(dir, ['init', '--quiet', work]);
    await git(work, ['remote', 'add', 'origin', bare]);
    return new LocalGitRepo(`file://${bare}`, work);
  }

  /**
   * Writes each file (a path relative to the repository root; `null` deletes it), commits them as
   * one commit on `main` and pushes it. Returns the commit's SHA.
   */
  async commit(files: Readonly<Record<string, string | null>>, message: string): Promise<string> {
    for (const [path, content] of Object.entries(files)) {
      const full = join(this.work, path);
      if (content === null) {
        await rm(full, { force: true });
      } else {
        await mkdir(dirname(full), { recursive: true });
        await writeFile(full, content);
      }
    }
    await git(this.work, ['add', '--all']);
    await git(this.work, ['commit', '--quiet', '--message', message]);
    await git(this.work, ['push', '--quiet', 'origin', 'HEAD:main']);
    return (await git(this.work, ['rev-parse', 'HEAD'])).trim();
  }
}

async function git(cwd: string, args: readonly string[]): Promise<string> {
  const { stdout } = await run('git', [...gitConfig, ...args], { cwd });
  return stdout;
}
