# SPDX-License-Identifier: MIT
# fish completion for sbx and the sbx-* programs.

function __sbx_ids
    sbx-ls -q 2>/dev/null
end

function __sbx_snaps
    sbx-snap list 2>/dev/null
end

complete -c sbx -f -n __fish_use_subcommand -a 'provision run snap fork inspect ls gc watchdog pause cp mcp'

for p in sbx-provision sbx-run sbx-snap sbx-fork sbx-inspect sbx-ls sbx-gc sbx-watchdog sbx-pause sbx-cp sbx-mcp
    complete -c $p -s h -l help -d 'usage'
    complete -c $p -s V -l version -d 'version'
end

complete -c sbx-provision -s n -l dry-run -d 'check and print, create nothing'
complete -c sbx-provision -l no-watchdog -d 'start no per-sandbox watchdog'
complete -c sbx-provision -l fill-pools -d 'make the members the warm pools lack'
complete -c sbx-provision -s o -l output -x -a 'yaml json' -d 'output format'
complete -c sbx-provision -s c -l correlation-id -x -d 'audit correlation ID'
complete -c sbx-provision -s P -l policy -r -F -d 'the operator policy file'
complete -c sbx-provision -F

complete -c sbx-run -s t -l tty -d 'allocate a terminal'
complete -c sbx-run -s m -l manifest -r -F -d 'one-shot from a manifest'
complete -c sbx-run -s e -l env -x -d 'NAME=VALUE'
complete -c sbx-run -s w -l workdir -x -d 'working directory'
complete -c sbx-run -s u -l user -x -d 'UID[:GID]'
complete -c sbx-run -s T -l timeout -x -d 'time limit in seconds'
complete -c sbx-run -s k -l kill-after -x -d 'grace after SIGTERM'
complete -c sbx-run -l trace -r -F -d 'write the execution trace'
complete -c sbx-run -l snapshot-before -d 'snapshot the sandbox before the command runs'
complete -c sbx-run -s o -l output -x -a 'json yaml' -d 'capture the streams, print one result object'
complete -c sbx-run -l max-output -x -d 'with -o: bytes kept of each stream'
complete -c sbx-run -s d -l detach -d 'run in the background, print the run ID'
complete -c sbx-run -l once -x -d 'run once for a caller key; a repeat replays the result'
complete -c sbx-run -l wait -x -d 'wait for a background run'
complete -c sbx-run -l signal -x -a 'INT TERM HUP' -d 'signal a background run'
complete -c sbx-run -l session -x -d 'run the line in a persistent shell'
complete -c sbx-run -l restart -d 'with --session: end the shell first'
complete -c sbx-run -s c -l correlation-id -x -d 'audit correlation ID'
complete -c sbx-run -s P -l policy -r -F -d 'the operator policy file'
complete -c sbx-run -f -a '(__sbx_ids)'

complete -c sbx-inspect -s o -l output -x -a 'yaml json' -d 'output format'
complete -c sbx-inspect -l usage -d 'what the sandbox uses now'
complete -c sbx-inspect -f -a '(__sbx_ids)'

complete -c sbx-ls -l runs -x -a '(__sbx_ids)' -d "a sandbox's background runs"
complete -c sbx-ls -s f -l filter -x -a 'status= tier= label:' -d 'status=S, tier=T, label:NAME=VALUE'
complete -c sbx-ls -s s -l snapshots -d 'list snapshots instead'
complete -c sbx-ls -s q -l quiet -d 'IDs only'
complete -c sbx-ls -s o -l output -x -a 'yaml json' -d 'output format'
complete -c sbx-ls -f

complete -c sbx-gc -s n -l dry-run -d 'show, remove nothing'
complete -c sbx-gc -l verify-audit -d 'check the audit log (chain, head, macs)'
complete -c sbx-gc -l keep-last -x -d 'snapshots kept per lineage'
complete -c sbx-gc -l store -x -d 'apply retention to this S3 store'
complete -c sbx-gc -l grace -x -d 'with --store, spare layers younger than this'
complete -c sbx-gc -l max-age -x -d 'keep snapshots younger than this'
complete -c sbx-gc -s c -l correlation-id -x -d 'audit correlation ID'
complete -c sbx-gc -f -a '(__sbx_ids)'

complete -c sbx-watchdog -l all -d 'every sandbox of the state root'
complete -c sbx-watchdog -l once -d 'one pass, then exit'
complete -c sbx-watchdog -l extend -x -d 'more lifetime for a live sandbox'
complete -c sbx-watchdog -s i -l interval -x -d 'memory sampling interval'
complete -c sbx-watchdog -f -a '(__sbx_ids)'

complete -c sbx-pause -s r -l resume -d 'thaw instead of freeze'
complete -c sbx-pause -s c -l correlation-id -x -d 'audit correlation ID'
complete -c sbx-pause -f -a '(__sbx_ids)'

complete -c sbx-cp -s c -l correlation-id -x -d 'audit correlation ID'
complete -c sbx-cp -a '(__sbx_ids | sed "s/\$/:/")' -d 'sandbox ID:PATH'

complete -c sbx-snap -f -n 'not __fish_seen_subcommand_from create list inspect verify remove restore export import push pull' -a 'create list inspect verify remove restore export import push pull'
complete -c sbx-snap -l id -x -d 'snapshot ID (create), sandbox ID (restore)'
complete -c sbx-snap -l no-memory -d 'the files only, no memory checkpoint (create)'
complete -c sbx-snap -l progress -x -a 'json bar none' -d 'how long work shows its progress'
complete -c sbx-snap -l store -x -d 'S3 store for push, pull, list, inspect, remove, restore'
complete -c sbx-snap -s o -l output -x -a 'yaml json' -d 'output format'
complete -c sbx-snap -s f -l file -r -F -d 'export to a file'
complete -c sbx-snap -s c -l correlation-id -x -d 'audit correlation ID'
complete -c sbx-snap -s P -l policy -r -F -d 'the operator policy file'
complete -c sbx-snap -s m -l manifest -r -F -d "the children's manifest instead of the snapshot's"
complete -c sbx-snap -f -n '__fish_seen_subcommand_from inspect verify remove restore export push' -a '(__sbx_snaps)'
complete -c sbx-snap -f -n 'not __fish_seen_subcommand_from list inspect verify remove restore export import push pull' -a '(__sbx_ids)'

complete -c sbx-fork -s n -l count -x -d 'how many children'
complete -c sbx-fork -l id -x -d 'name the children PREFIX-1..N'
complete -c sbx-fork -l progress -x -a 'json bar none' -d 'how long work shows its progress'
complete -c sbx-fork -l store -x -d 'pull the snapshot from this S3 store'
complete -c sbx-fork -l select -x -a '(__sbx_ids)' -d 'keep this branch, retire its siblings'
complete -c sbx-fork -s o -l output -x -a 'yaml json' -d 'output format'
complete -c sbx-fork -s c -l correlation-id -x -d 'audit correlation ID'
complete -c sbx-fork -s P -l policy -r -F -d 'the operator policy file'
complete -c sbx-fork -s m -l manifest -r -F -d "the children's manifest instead of the snapshot's"
complete -c sbx-fork -f -a '(__sbx_snaps) (__sbx_ids)'

complete -c sbx-mcp -l manifests -r -a '(__fish_complete_directories)' -d 'named manifests for the create tool'
complete -c sbx-mcp -l max-sandboxes -x -d 'live sandboxes this server may make'
complete -c sbx-mcp -l max-output -x -d 'bytes kept of each stream of a run'
complete -c sbx-mcp -l max-file -x -d 'bytes read_file returns'
complete -c sbx-mcp -l timeout -x -d "a run's default timeout"
complete -c sbx-mcp -l max-timeout -x -d 'the most a run may ask for'
complete -c sbx-mcp -l any-sandbox -d 'reach every sandbox of the state root'
complete -c sbx-mcp -s P -l policy -r -F -d 'the operator policy file'
complete -c sbx-mcp -s c -l correlation-id -x -d 'audit correlation ID'
