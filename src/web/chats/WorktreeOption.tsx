// "Start in a new git worktree": offered only where the folder is a git repository. The branch is
// new, made from the repository's HEAD; the host makes the tree beside the repository
// (`<name>-worktrees/<branch>`) and refuses it outside the allowed folders. The name is checked here
// by the host's own rule (contracts/worktree.ts) so a bad one is said before anything is sent.
import { useId } from 'preact/hooks';
import { worktreeBranchProblem } from '../../contracts/index.ts';

export interface WorktreeChoice {
  on: boolean;
  branch: string;
}

/** The problem with a choice, or null when it can be sent. */
export function worktreeChoiceProblem(choice: WorktreeChoice): string | null {
  return choice.on && choice.branch.trim() ? worktreeBranchProblem(choice.branch.trim()) : null;
}

export function WorktreeOption({ choice, onChange, repository }: { choice: WorktreeChoice; onChange: (choice: WorktreeChoice) => void; repository: string }) {
  const branchId = useId();
  const problem = worktreeChoiceProblem(choice);
  const name = repository.replace(/\/+$/, '').split('/').pop() ?? repository;
  return (
    <div class="worktree-option stack" data-testid="worktree-option">
      <label class="inline">
        <input type="checkbox" name="worktree" checked={choice.on} onChange={(e) => onChange({ ...choice, on: e.currentTarget.checked })} />
        Start in a new git worktree, on a new branch
      </label>
      {choice.on && (
        <>
          <label for={branchId}>New branch</label>
          <input
            id={branchId}
            type="text"
            name="worktree-branch"
            value={choice.branch}
            maxLength={120}
            autoComplete="off"
            spellcheck={false}
            placeholder="tether/… (the host picks one)"
            aria-invalid={problem !== null}
            onInput={(e) => onChange({ ...choice, branch: e.currentTarget.value })}
          />
          <p class="muted small">
            Made from the repository's current commit, in <code>{`${name}-worktrees/${choice.branch.trim() || '<branch>'}`}</code> beside it; your own checkout
            stays as it is.
          </p>
          {problem && (
            <p class="notice error" role="alert">
              {problem}
            </p>
          )}
        </>
      )}
    </div>
  );
}
