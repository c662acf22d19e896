# napisim_target_warnings(tgt): the project's warning set; -Werror when NAPISIM_WERROR is on.
function(napisim_target_warnings tgt)
  target_compile_options(${tgt} PRIVATE -Wall -Wextra -Wshadow -Wconversion -Wno-sign-conversion
                                        -Wnon-virtual-dtor -Wformat=2)
  if(NAPISIM_WERROR)
    target_compile_options(${tgt} PRIVATE -Werror)
  endif()
endfunction()
