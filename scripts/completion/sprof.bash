# bash completion for the sprof tools (installed as
# share/bash-completion/completions/sprof-* by sprof_tool(), cmake/tools.cmake).
# Options come from the tool's own --help, so they never drift; operands
# complete as file names.
_sprof_tool()
{
    local cur=${COMP_WORDS[COMP_CWORD]}
    if [[ $cur == -* ]]; then
        local opts
        opts=$("$1" --help 2> /dev/null | grep -oE -- '--?[a-zA-Z][a-zA-Z0-9-]*' | sort -u)
        mapfile -t COMPREPLY < <(compgen -W "$opts" -- "$cur")
    else
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
    fi
}
complete -o filenames -F _sprof_tool sprof-callgraph sprof-diff sprof-export sprof-flamegraph sprof-fold \
    sprof-symmap sprof-top sprof-trace sprof-record
