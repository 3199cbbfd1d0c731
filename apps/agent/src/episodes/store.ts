import { sha256Hex, treeHash, type EpisodeState, type SnapshotManifest } from "@agentlab/core";
import { Workspace } from "./workspace";

// The content-addressed store of one episode job: file contents by sha256, workspace trees by
// their tree hash (a manifest of path → content hash) and states by their hash. It is what the
// job's result carries to the server, and what continuations rebuild their workspaces from.

export class ContentStore {
  readonly blobs = new Map<string, string>();
  readonly snapshots = new Map<string, SnapshotManifest>();
  readonly states = new Map<string, EpisodeState>();

  putBlob(content: string): string {
    const h = sha256Hex(content);
    this.blobs.set(h, content);
    return h;
  }

  /** Stores a tree's files and manifest; returns its tree hash. */
  putTree(files: readonly { path: string; content: string }[]): string {
    const manifest: SnapshotManifest = {
      files: files.map((f) => ({ path: f.path, sha256: this.putBlob(f.content) })).sort(byPath),
    };
    const h = treeHash(manifest);
    this.snapshots.set(h, manifest);
    return h;
  }

  putState(state: EpisodeState): void {
    this.states.set(state.hash, state);
  }

  /** The files of a stored tree, each checked against its content hash. */
  treeFiles(hash: string): { path: string; content: string }[] {
    const manifest = this.snapshots.get(hash);
    if (!manifest) throw new Error(`unknown snapshot ${hash}`);
    if (treeHash(manifest) !== hash) throw new Error(`snapshot ${hash} does not hash to its address`);
    return manifest.files.map((f) => {
      const content = this.blobs.get(f.sha256);
      if (content === undefined || sha256Hex(content) !== f.sha256)
        throw new Error(`snapshot ${hash}: the content of ${f.path} is missing or corrupt`);
      return { path: f.path, content };
    });
  }

  /** A fresh workspace at `root` rebuilt from a stored tree; its tree hash is checked once written. */
  rebuild(hash: string, root: string): Workspace {
    const ws = Workspace.create(root, this.treeFiles(hash));
    const rebuilt = this.putTree(ws.files());
    if (rebuilt !== hash) throw new Error(`rebuilt workspace hashes to ${rebuilt}, not ${hash}`);
    return ws;
  }
}

const byPath = (a: { path: string }, b: { path: string }) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
