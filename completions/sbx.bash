# SPDX-License-Identifier: MIT
# bash completion for sbx and the sbx-* programs.
# COMPREPLY=($(compgen ...)) is the completion idiom; words never hold spaces here.
# shellcheck disable=SC2207

_sbx_ids() {
	COMPREPLY+=($(compgen -W "$(sbx-ls -q 2>/dev/null)" -- "$1"))
}

_sbx_snaps() {
	COMPREPLY+=($(compgen -W "$(sbx-snap list 2>/dev/null)" -- "$1"))
}

_sbx_prog() {
	local prog=$1 cur=$2 prev=$3 opts
	case $prog in
	sbx-provision) opts="-n --dry-run --no-watchdog --fill-pools -o --output -c --correlation-id -P --policy -h --help -V --version" ;;
	sbx-run) opts="-t --tty -m --manifest -e --env -w --workdir -u --user -T --timeout -k --kill-after --trace --snapshot-before -o --output --max-output -d --detach --once --wait --signal --session --restart -c --correlation-id -P --policy -h --help -V --version" ;;
	sbx-snap) opts="--id --no-memory --progress --store -o --output -f --file -m --manifest -P --policy -c --correlation-id -h --help -V --version" ;;
	sbx-fork) opts="-n --count --id --select --store -o --output --progress -m --manifest -P --policy -c --correlation-id -h --help -V --version" ;;
	sbx-inspect) opts="-o --output --usage -h --help -V --version" ;;
	sbx-ls) opts="-s --snapshots --runs -q --quiet -o --output -f --filter -h --help -V --version" ;;
	sbx-gc) opts="-n --dry-run --keep-last --max-age --store --grace --verify-audit -c --correlation-id -h --help -V --version" ;;
	sbx-watchdog) opts="--all --once -i --interval --extend -h --help -V --version" ;;
	sbx-pause) opts="-r --resume -c --correlation-id -h --help -V --version" ;;
	sbx-cp) opts="-c --correlation-id -h --help -V --version" ;;
	sbx-mcp) opts="--manifests --max-sandboxes --max-output --max-file --timeout --max-timeout --any-sandbox -P --policy -c --correlation-id -h --help -V --version" ;;
	esac
	case $prev in
	-o | --output)
		COMPREPLY=($(compgen -W "yaml json" -- "$cur"))
		return ;;
	-m | --manifest | --trace | -f | --file | -P | --policy)
		COMPREPLY=($(compgen -f -- "$cur"))
		return ;;
	-w | --workdir | --manifests)
		COMPREPLY=($(compgen -d -- "$cur"))
		return ;;
	--select | --runs)
		_sbx_ids "$cur"
		return ;;
	--signal)
		COMPREPLY=($(compgen -W "INT TERM HUP" -- "$cur"))
		return ;;
	--progress)
		COMPREPLY=($(compgen -W "json bar none" -- "$cur"))
		return ;;
	-e | --env | -u | --user | -T | --timeout | -k | --kill-after | -c | --correlation-id | -i | --interval | \
	    --extend | --session | --once | --filter | --id | -n | --count | --keep-last | --max-age | --store | --grace | --max-output | \
	    --max-sandboxes | --max-file | --max-timeout)
		return ;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$opts" -- "$cur"))
		return
	fi
	case $prog in
	sbx-provision) COMPREPLY=($(compgen -f -- "$cur")) ;;
	sbx-inspect | sbx-gc | sbx-run | sbx-watchdog | sbx-pause) _sbx_ids "$cur" ;;
	sbx-fork) _sbx_snaps "$cur"; _sbx_ids "$cur" ;;
	sbx-cp) COMPREPLY=($(compgen -f -- "$cur")); _sbx_ids "$cur" ;;
	sbx-snap)
		local verb
		for verb in "${COMP_WORDS[@]:1}"; do
			case $verb in
			list | inspect | verify | remove | restore | export | import | create | push | pull) break ;;
			esac
			verb=
		done
		case $verb in
		"") COMPREPLY=($(compgen -W "create list inspect verify remove restore export import push pull" -- "$cur"))
			_sbx_ids "$cur" ;;
		create) _sbx_ids "$cur" ;;
		import) COMPREPLY=($(compgen -f -- "$cur")) ;;
		list | pull) ;;
		*) _sbx_snaps "$cur" ;;
		esac ;;
	esac
}

_sbx() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
	local prog=${COMP_WORDS[0]##*/}
	COMPREPLY=()
	if [ "$prog" = sbx ]; then
		if [ "$COMP_CWORD" -eq 1 ]; then
			COMPREPLY=($(compgen -W "provision run snap fork inspect ls gc watchdog pause cp mcp" -- "$cur"))
			return
		fi
		prog=sbx-${COMP_WORDS[1]}
	fi
	_sbx_prog "$prog" "$cur" "$prev"
}

complete -F _sbx sbx sbx-provision sbx-run sbx-snap sbx-fork sbx-inspect sbx-ls sbx-gc sbx-watchdog \
	sbx-pause sbx-cp sbx-mcp
