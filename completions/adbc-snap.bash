# SPDX-License-Identifier: Apache-2.0
# bash completion for adbc-snap. Commands and each command's options come
# from adbc-snap itself (`help --commands`, `help COMMAND`), so they follow
# the installed version.

_adbc_snap_opts()
{
    # Every -x / --xxx word of the command's help: its usage and option lines.
    "$1" help "$2" 2> /dev/null |
        grep -oE -- '(^|[[ |(,])-{1,2}[A-Za-z][A-Za-z0-9-]*' | sed 's/^[[ |(,]//' | sort -u
}

_adbc_snap()
{
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
    local prog=${COMP_WORDS[0]} cmd= i
    COMPREPLY=()
    for ((i = 1; i < COMP_CWORD; i++)); do
        case ${COMP_WORDS[i]} in
            -s | -t | --timeout) ((i++)) ;;
            -*) ;;
            *)
                cmd=${COMP_WORDS[i]}
                break
                ;;
        esac
    done
    if [ -z "$cmd" ]; then
        case $prev in
            -s | -t | --timeout) return 0 ;;
        esac
        if [[ $cur == -* ]]; then
            mapfile -t COMPREPLY < <(compgen -W "-s -t --timeout -q --help --version" -- "$cur")
        else
            mapfile -t COMPREPLY < <(compgen -W "$("$prog" help --commands 2> /dev/null)" -- "$cur")
        fi
        return 0
    fi
    if [ "$cmd" = help ]; then
        [ "$i" -eq $((COMP_CWORD - 1)) ] &&
            mapfile -t COMPREPLY < <(compgen -W "--commands $("$prog" help --commands 2> /dev/null)" -- "$cur")
        return 0
    fi
    if [[ $cur == -* ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$(_adbc_snap_opts "$prog" "$cmd") --help" -- "$cur")
        return 0
    fi
    # Arguments: local files where a command takes them (device paths and
    # refs are not completed).
    case $cmd in
        push | install | snapshot | screenshot | pull)
            compopt -o filenames 2> /dev/null
            mapfile -t COMPREPLY < <(compgen -f -- "$cur")
            ;;
    esac
    return 0
}
complete -F _adbc_snap adbc-snap
